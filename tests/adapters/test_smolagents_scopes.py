"""smolagents: delegations to managed agents are guarded, guard_agent is idempotent, and the
state of a finished run goes away (a continuation run keeps it with share_conversation)."""

from __future__ import annotations

import gc
from collections.abc import Sequence
from typing import Any

import pytest

pytest.importorskip("smolagents")

from smolagents import CodeAgent, ToolCallingAgent  # type: ignore[import-untyped]

from loopfuse import Guard, LoopAbortedError
from loopfuse.adapters.smolagents import guard_agent

from .test_smolagents import ProbeTool, ScriptedModel, Turn, observations, strict_guard

SECRET = "secret-task-7"
FINAL: Turn = [("final_answer", {"answer": "done"})]


def helper(plan: Sequence[Turn], *tools: Any) -> ToolCallingAgent:
    model = ScriptedModel(plan)
    return ToolCallingAgent(
        tools=list(tools), model=model, name="helper", description="helps", max_steps=5, verbosity_level=0
    )


def manager(plan: Sequence[Turn], managed: ToolCallingAgent, *tools: Any) -> ToolCallingAgent:
    model = ScriptedModel(plan)
    return ToolCallingAgent(
        tools=list(tools), model=model, managed_agents=[managed], max_steps=50, verbosity_level=0
    )


def probe_agent(plan: Sequence[Turn], probe: ProbeTool) -> ToolCallingAgent:
    return ToolCallingAgent(tools=[probe], model=ScriptedModel(plan), max_steps=10, verbosity_level=0)


def test_delegating_the_same_task_again_and_again_is_denied_then_stopped() -> None:
    sub = helper([[("final_answer", {"answer": "found"})]])
    main = guard_agent(manager([[("helper", {"task": SECRET})]], sub), strict_guard())

    with pytest.raises(LoopAbortedError, match="helper") as raised:
        main.run("go")

    assert sub.model.calls == 2  # the third delegation and after never reached the helper
    denials = [o for o in observations(main) if "loopfuse refused this helper call" in o]
    assert len(denials) == 2
    assert SECRET not in str(raised.value) and all(SECRET not in d for d in denials)


def test_a_code_agent_delegating_in_a_loop_is_stopped() -> None:
    sub = helper([[("final_answer", {"answer": "found"})]])
    code = f"Thought: ask again.\n<code>\nprint(helper(task='{SECRET}'))\n</code>"
    main = CodeAgent(
        tools=[], model=ScriptedModel([code]), managed_agents=[sub], max_steps=50, verbosity_level=0
    )
    guard_agent(main, strict_guard())

    with pytest.raises(LoopAbortedError, match="helper"):
        main.run("go")

    assert sub.model.calls == 2
    assert any("loopfuse refused this helper call" in o for o in observations(main))


def test_delegations_with_new_tasks_or_extra_arguments_are_not_repeats() -> None:
    sub = helper([[("final_answer", {"answer": "found"})]])
    tasks: list[Turn] = [[("helper", {"task": t})] for t in ("a", "b", "c")]
    extra: Turn = [("helper", {"task": "a", "additional_args": {"page": 2}})]
    main = guard_agent(manager([*tasks, extra, FINAL], sub), strict_guard())

    assert main.run("go") == "done"
    assert sub.model.calls == 4
    assert not any("loopfuse" in o for o in observations(main))


def test_guarding_twice_with_the_same_guard_checks_each_call_once() -> None:
    probe, guard = ProbeTool(), strict_guard()
    agent = probe_agent([[("probe", {"q": "x"})], [("probe", {"q": "x"})], FINAL], probe)

    assert guard_agent(guard_agent(agent, guard), guard) is agent
    assert agent.run("go") == "done"
    assert probe.runs == ["x", "x"]  # limit 2: wrapped twice, the second call was denied
    assert guard.stats()["checks"] == 2


def test_guarding_with_another_guard_is_refused() -> None:
    sub = helper([FINAL])
    main = guard_agent(manager([FINAL], sub), Guard())

    with pytest.raises(ValueError, match="'helper' is already guarded by another Guard"):
        guard_agent(sub, Guard())
    with pytest.raises(ValueError, match="already guarded"):
        guard_agent(main, Guard())


def test_a_managed_agent_guarded_on_its_own_first_is_not_wrapped_again() -> None:
    probe, guard = ProbeTool(), strict_guard()
    sub = helper([[("probe", {"q": "x"})], [("probe", {"q": "x"})], FINAL], probe)
    guard_agent(sub, guard)
    main = guard_agent(manager([[("helper", {"task": "t"})], FINAL], sub), guard)

    assert main.run("go") == "done"
    assert probe.runs == ["x", "x"]
    assert guard.stats()["checks"] == 3  # two probe calls, one delegation


@pytest.mark.parametrize("helper_fails", [False, True])
def test_the_state_of_a_delegation_goes_when_it_ends(helper_fails: bool) -> None:
    probe, guard = ProbeTool(), strict_guard()
    looping = [[("probe", {"q": "x"})]] if helper_fails else [[("probe", {"q": "x"})], FINAL]
    plan: list[Turn] = [[("helper", {"task": "t"})], [("probe", {"q": "own"})], FINAL]
    main = guard_agent(manager(plan, helper(looping, probe), ProbeTool()), guard)

    assert main.run("go") == "done"
    errors = [str(s.error) for s in main.memory.steps if getattr(s, "error", None)]
    failed = any("request to team member 'helper'" in e for e in errors)
    assert failed is helper_fails
    assert guard.stats()["agents"] == 1  # the parent's run only


def test_the_state_of_a_finished_agent_goes_with_the_agent() -> None:
    guard = strict_guard()
    agent = guard_agent(probe_agent([[("probe", {"q": "x"})], FINAL], ProbeTool()), guard)
    agent.run("go")
    assert guard.stats()["agents"] == 1

    del agent
    gc.collect()
    assert guard.stats()["agents"] == 0


def _guard_on(url: str, prefix: str) -> Guard:
    return Guard.from_config(
        {
            "circuit_breaker": {"duplicate_limit": 2, "result_limit": 2},
            "store": {"url": url, "prefix": prefix},
        }
    )


def test_each_new_run_drops_the_state_of_the_run_it_replaces(store_url: str, store_prefix: str) -> None:
    guard = _guard_on(store_url, store_prefix)
    agent = guard_agent(probe_agent([[("probe", {"q": "x"})], FINAL], ProbeTool()), guard)
    for _ in range(3):
        agent.run("go")
        agent.model.calls = 0

    assert guard.stats()["agents"] == 1
    guard.close()


def test_a_conversations_next_message_is_a_run_of_its_own(store_url: str, store_prefix: str) -> None:
    """``reset=False`` (a chat's next message) keeps the agent's memory, not its counts."""
    probe, guard = ProbeTool(), _guard_on(store_url, store_prefix)
    agent = guard_agent(probe_agent([[("probe", {"q": "x"})], FINAL], probe), guard)
    for reset in (True, False, False):
        agent.run("go", reset=reset)
        agent.model.calls = 0

    assert probe.runs == ["x", "x", "x"]  # one state for the conversation would refuse the 3rd
    assert not any("loopfuse refused" in o for o in observations(agent))
    assert guard.stats()["agents"] == 1
    guard.close()


def test_a_shared_conversation_keeps_the_state_of_the_run_it_continues(
    store_url: str, store_prefix: str
) -> None:
    probe, guard = ProbeTool(), _guard_on(store_url, store_prefix)
    agent = guard_agent(probe_agent([[("probe", {"q": "x"})], FINAL], probe), guard, share_conversation=True)
    for reset in (True, False, False):
        agent.run("go", reset=reset)
        agent.model.calls = 0

    assert probe.runs == ["x", "x"]
    assert sum("loopfuse refused this probe call" in o for o in observations(agent)) == 1
    guard.close()


class LooksUpThenAnswers(ScriptedModel):
    """A managed agent's model: on each task, the same look-up, then its answer."""

    def __init__(self) -> None:
        super().__init__([[("probe", {"q": "acme revenue"})], FINAL])

    def generate(self, messages: list[Any], stop_sequences: Any = None, **kwargs: Any) -> Any:
        self.calls = 1 if any("acme revenue" in str(m) for m in messages[1:]) else 0  # the look-up done
        return super().generate(messages, stop_sequences, **kwargs)


WORDS = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliett"]


def shared_helper_look_ups(kind: str) -> int:
    """How often a helper shared with its manager (``share_subagents=True``) ran the same
    look-up, once per delegation, ``kind`` of manager delegating 10 tasks."""
    probe = ProbeTool()
    sub = ToolCallingAgent(
        tools=[probe], model=LooksUpThenAnswers(), name="helper", description="helps", max_steps=5
    )
    if kind == "code":
        code = f"<code>\nfor w in {WORDS!r}:\n    r = helper(task='look up ' + w)\nfinal_answer(r)\n</code>"
        main: Any = CodeAgent(tools=[], model=ScriptedModel([code]), managed_agents=[sub], max_steps=3)
    else:
        plan: list[Turn] = [[("helper", {"task": f"look up {w}"})] for w in WORDS] + [FINAL]
        main = ToolCallingAgent(tools=[], model=ScriptedModel(plan), managed_agents=[sub], max_steps=20)
    guard_agent(main, Guard(), share_subagents=True)
    main.run("go")
    return len(probe.runs)


def test_a_shared_helpers_repeated_look_up_counts_whatever_the_manager() -> None:
    """The helper's steps start again at 1 in each delegation: its calls still count from one
    delegation to the next, under a manager whose own calls have rounds or not."""
    by_code, by_tool_calls = shared_helper_look_ups("code"), shared_helper_look_ups("tool calls")

    assert by_tool_calls < len(WORDS)  # the repeated look-up was refused
    assert by_code == by_tool_calls
