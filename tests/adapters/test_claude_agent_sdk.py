"""The Claude Agent SDK adapter, end to end: the real SDK and bundled CLI, a fake Anthropic API."""

from __future__ import annotations

from typing import Any, cast

import pytest

pytest.importorskip("claude_agent_sdk")

from claude_agent_sdk.types import PreToolUseHookInput, PreToolUseHookSpecificOutput, SyncHookJSONOutput

from loopfuse import Guard
from loopfuse.adapters.claude_agent_sdk import loopfuse_hooks

from .claude_harness import call, first_user_text, run_claude, run_claude_session, say, since_last_prompt
from .fake_anthropic import tool_results


def strict_guard() -> Guard:
    return Guard.from_config(
        {"circuit_breaker": {"duplicate_limit": 2, "result_limit": 2}, "guard": {"abort_after_denials": 3}}
    )


def always_the_same(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return call(q="weather in Paris")


async def test_a_looping_model_is_denied_then_the_run_is_stopped() -> None:
    run = await run_claude(always_the_same, loopfuse_hooks(strict_guard()))

    assert len(run.tool_runs) == 2
    denials = [r for r in run.results_seen_by_model() if r.get("is_error")]
    assert len(denials) == 2  # the third denial escalates and ends the run before the model answers
    assert all("loopfuse refused this mcp__t__probe call" in str(d["content"]) for d in denials)
    assert all("Paris" not in str(d["content"]) for d in denials)
    assert len(run.model_requests) == 5
    assert run.final().terminal_reason == "hook_stopped"
    notices = [m for m in run.messages if "stuck in a loop" in str(getattr(m, "data", ""))]
    assert notices and "mcp__t__probe" in str(notices[0].data)


async def test_a_healthy_run_with_legitimate_repeats_is_untouched() -> None:
    plan = [call(q="status"), call(q="deploy"), call(q="status"), call(q="status"), say("deployed")]

    def script(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return plan[len(tool_results(messages))]

    guard = Guard()
    run = await run_claude(script, loopfuse_hooks(guard))

    assert [r["q"] for r in run.tool_runs] == ["status", "deploy", "status", "status"]
    assert not any(r.get("is_error") for r in run.results_seen_by_model())
    assert run.final().terminal_reason != "hook_stopped"
    assert guard.stats()["allowed"] == 4


def main_then_subagent(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    done = len(tool_results(messages))
    if "SUBTASK" in first_user_text(messages):
        return call(q="same") if done < 2 else say("sub done")
    if done < 2:
        return call(q="same")
    if done == 2:
        return call("Agent", description="look", prompt="SUBTASK look", subagent_type="helper")
    return say("done")


@pytest.mark.parametrize(("share", "runs"), [(False, 4), (True, 2)])
@pytest.mark.slow
async def test_subagents_get_their_own_state_unless_shared(share: bool, runs: int) -> None:
    guard = strict_guard()
    run = await run_claude(
        main_then_subagent, loopfuse_hooks(guard, share_subagents=share), with_subagent=True
    )

    assert len(run.tool_runs) == runs
    assert run.tool_runs == [{"q": "same"}] * runs
    assert guard.stats()["agents"] == 1  # the main agent's: the sub-agent's went when it stopped


@pytest.mark.slow
async def test_a_subagents_state_goes_when_it_stops() -> None:
    guard = strict_guard()
    await run_claude(main_then_subagent, loopfuse_hooks(guard, share_session=True), with_subagent=True)

    assert guard.stats()["agents"] == 1  # the session's; the sub-agent's went with its SubagentStop


def last_user_text(messages: list[dict[str, Any]]) -> str:
    return first_user_text([next(m for m in reversed(messages) if m["role"] == "user")])


def again_after_the_subagent(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """main_then_subagent, then the main agent's same call once more when the CLI tells it the
    background sub-agent finished."""
    if "<task-notification>" in last_user_text(messages) and "SUBTASK" not in first_user_text(messages):
        return call(q="same") if len(tool_results(messages)) == 3 else say("done")
    return main_then_subagent(messages)


@pytest.mark.slow
async def test_a_background_subagent_ending_does_not_start_a_new_task() -> None:
    """The CLI tells the main agent a background sub-agent ended with a ``<task-notification>``
    prompt: the main agent's task goes on, so its third identical call is refused."""
    run = await run_claude(again_after_the_subagent, loopfuse_hooks(strict_guard()), with_subagent=True)

    assert run.tool_runs == [{"q": "same"}] * 4  # the main agent's 2, the sub-agent's 2
    assert "loopfuse refused" in str(run.results_seen_by_model()[-1]["content"])


def twice_per_prompt(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return call(q="status") if since_last_prompt(messages) < 2 else say("ok")


@pytest.mark.parametrize(("share", "runs"), [(False, 6), (True, 2)])
@pytest.mark.slow
async def test_each_prompt_of_a_conversation_is_a_task_of_its_own(share: bool, runs: int) -> None:
    """A user asking three times for a status the agent looks up twice each time: each prompt
    starts afresh, unless the session is shared (then the third look-up is refused)."""
    guard = strict_guard()
    run = await run_claude_session(
        twice_per_prompt, loopfuse_hooks(guard, share_session=share), ["a", "b", "c"]
    )

    assert len(run.tool_runs) == runs
    assert guard.stats()["agents"] == 1  # each ended task's state went with it


async def test_parallel_identical_calls_in_one_turn_are_counted_exactly() -> None:
    def script(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return (
            [block for _ in range(4) for block in call(q="x")] if not tool_results(messages) else say("done")
        )

    run = await run_claude(script, loopfuse_hooks(strict_guard()))

    assert len(run.tool_runs) == 2
    assert [bool(r.get("is_error")) for r in run.results_seen_by_model()] == [False, False, True, True]


def recorded_input(tool: str, tool_input: dict[str, Any]) -> PreToolUseHookInput:
    """A PreToolUse input as the CLI 2.1 sends it (recorded from a run, ids shortened)."""
    return {
        "session_id": "5d119955",
        "transcript_path": "/tmp/x/projects/p/5d119955.jsonl",
        "cwd": "/tmp/x",
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": tool,
        "tool_input": tool_input,
        "tool_use_id": "toolu_01",
    }


async def test_claude_code_builtin_exempt_tools_are_not_counted() -> None:
    pre = loopfuse_hooks(strict_guard())["PreToolUse"][0].hooks[0]
    todo = recorded_input("TodoWrite", {"todos": [{"content": "x", "status": "pending"}]})
    bash = recorded_input("Bash", {"command": "ls"})

    todo_answers = [await pre(todo, "toolu_01", {"signal": None}) for _ in range(5)]
    bash_answers = [await pre(bash, "toolu_01", {"signal": None}) for _ in range(3)]

    assert todo_answers == [{}] * 5
    assert bash_answers[:2] == [{}, {}]
    # The SDK types a hook's answer as any hook's; this one answers synchronously, for PreToolUse.
    denied = cast(SyncHookJSONOutput, bash_answers[2])
    specific = cast(PreToolUseHookSpecificOutput, denied["hookSpecificOutput"])
    assert specific["permissionDecision"] == "deny"


async def test_a_background_subagent_keeps_its_state_when_the_user_prompts_again() -> None:
    """A sub-agent still running in the background when the user submits the next prompt stays
    in the task it started in: its third identical call is refused, and its state goes when it stops."""
    guard = strict_guard()
    hooks = loopfuse_hooks(guard)
    prompt, pre = hooks["UserPromptSubmit"][0].hooks[0], hooks["PreToolUse"][0].hooks[0]
    stop = hooks["SubagentStop"][0].hooks[0]
    context: Any = {"signal": None}
    sub: Any = {**recorded_input("Bash", {"command": "ls"}), "agent_id": "a1", "agent_type": "helper"}
    first: Any = {"session_id": "5d119955", "hook_event_name": "UserPromptSubmit", "prompt": "a"}
    second: Any = {**first, "prompt": "b"}
    stopped: Any = {**sub, "hook_event_name": "SubagentStop"}

    await prompt(first, None, context)
    answers = [await pre(sub, "toolu_01", context) for _ in range(2)]
    await prompt(second, None, context)
    answers.append(await pre(sub, "toolu_01", context))
    await stop(stopped, None, context)

    assert [a == {} for a in answers] == [True, True, False]
    assert guard.stats()["agents"] == 0
