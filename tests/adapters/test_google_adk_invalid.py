"""Google ADK: calls of tools that do not exist as invalid turns, and the warning when
max_llm_calls ends a loop before the guard does."""

from __future__ import annotations

import logging
from typing import Any

import pytest

pytest.importorskip("google.adk")

from google.adk.agents import LlmAgent
from google.adk.agents.invocation_context import LlmCallsLimitExceededError
from google.adk.agents.run_config import RunConfig
from google.adk.apps import App
from google.adk.runners import InMemoryRunner
from google.genai import types

from loopfuse import Guard
from loopfuse.adapters.google_adk import LoopfusePlugin, loopfuse_callbacks

from .test_google_adk import Plan, Probe, ScriptedLlm, call, final_text, responses, run, say

NOT_A_TOOL = "no tool with that name"
INVALID = "contained no usable tool call"


def errors(events: list[Any]) -> list[str]:
    return [str(r.get("error", "")) for r in responses(events)]


@pytest.mark.parametrize("hook", ["plugin", "agent_callbacks"])
async def test_a_model_calling_a_missing_tool_again_and_again_is_stopped(hook: str) -> None:
    probe, model, guard = Probe(), ScriptedLlm(plan=[call("serch", q="x")]), Guard()
    callbacks = loopfuse_callbacks(guard)
    own = {"before_tool_callback": callbacks.before, "after_tool_callback": callbacks.after}
    agent = LlmAgent(
        name="main", model=model, tools=[probe.tool("main")], **(own if hook != "plugin" else {})
    )
    events = await run(agent, [LoopfusePlugin(guard)] if hook == "plugin" else [])
    seen = errors(events)
    assert [NOT_A_TOOL in e for e in seen] == [True] * 5 + [False] * 3
    assert all(INVALID in e for e in seen[5:])
    assert "invalid" in responses(events)[-1]["loopfuse_stopped"]
    assert events[-1].actions.escalate and model.calls == 8 and probe.runs == []


async def test_scattered_invalid_turns_among_real_work_change_nothing() -> None:
    bad = call("serch", q="x")
    plan: Plan = [bad, call(q="a"), bad, bad, call(q="b"), *[bad] * 5, call(q="c"), *[bad] * 5, say("done")]
    probe, guard = Probe(), Guard()
    events = await run(
        LlmAgent(name="main", model=ScriptedLlm(plan=plan), tools=[probe.tool("main")]),
        [LoopfusePlugin(guard)],
    )
    assert [q for _, q in probe.runs] == ["a", "b", "c"]
    assert sum(NOT_A_TOOL in e for e in errors(events)) == 13 and guard.stats()["denials"] == {}
    assert final_text(events) == "done"


def warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if "ends a looping run" in r.getMessage()]


@pytest.mark.parametrize(("max_llm_calls", "warned"), [(7, True), (8, False), (0, False)])
async def test_max_llm_calls_below_the_escalation_point(
    caplog: pytest.LogCaptureFixture, max_llm_calls: int, warned: bool
) -> None:
    caplog.set_level(logging.WARNING, logger="loopfuse")
    probe = Probe()
    agent = LlmAgent(name="main", model=ScriptedLlm(plan=[call(q="x")]), tools=[probe.tool("main")])
    runner = InMemoryRunner(
        app=App(name="loopfuse_test", root_agent=agent, plugins=[LoopfusePlugin(Guard())])
    )
    session = await runner.session_service.create_session(app_name=runner.app_name, user_id="u")
    message = types.Content(role="user", parts=[say("go")])
    events: list[Any] = []
    config = RunConfig(max_llm_calls=max_llm_calls)
    try:
        async for event in runner.run_async(
            user_id="u", session_id=session.id, new_message=message, run_config=config
        ):
            events.append(event)
    except LlmCallsLimitExceededError:  # what the warning says: ADK's limit comes first
        assert warned
    else:
        assert not warned and "loopfuse_stopped" in responses(events)[-1]
    found = warnings(caplog)
    assert len(found) == warned
    assert not warned or ("max_llm_calls=7" in found[0] and "max_llm_calls >= 8" in found[0])


async def model_calls_until_stopped(per_turn: int) -> int:
    model = ScriptedLlm(plan=[[call("serch", q="x")] * per_turn])
    await run(LlmAgent(name="main", model=model, tools=[Probe().tool("main")]), [LoopfusePlugin(Guard())])
    return model.calls


async def test_a_turn_of_several_calls_of_missing_tools_is_one_invalid_turn() -> None:
    assert await model_calls_until_stopped(3) == await model_calls_until_stopped(1) == 8
