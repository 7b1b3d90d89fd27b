"""OpenAI Agents SDK: calls of tools that do not exist as invalid turns, and the warning
when max_turns ends a loop before the guard does."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from agents import Agent, AgentHooks, RunConfig, Runner
from agents.exceptions import MaxTurnsExceeded, ToolInputGuardrailTripwireTriggered

from loopfuse import Guard, LoopAbortedError
from loopfuse.adapters.openai_agents import guard_agent, invalid_turn_formatter

from .scripted_openai_agents import ScriptedModel, calls, forever, scripted
from .test_openai_agents import Counter

NOT_FOUND = "Tool 'serch' not found."
INVALID = "contained no usable tool call"


def run_config(guard: Guard, **kwargs: Any) -> RunConfig:
    formatter = invalid_turn_formatter(guard, **kwargs)
    return RunConfig(
        tool_not_found_behavior="return_error_to_model", tool_error_formatter=formatter, tracing_disabled=True
    )


async def run(agent: Agent[Any], guard: Guard, max_turns: int = 60, **kwargs: Any) -> Any:
    return await Runner.run(agent, "find it", max_turns=max_turns, run_config=run_config(guard, **kwargs))


async def test_a_model_calling_a_missing_tool_again_and_again_is_stopped() -> None:
    counter, model, guard = Counter(), ScriptedModel(forever("serch", {"q": "acme"})), Guard()
    agent = guard_agent(Agent(name="main", model=model, tools=[counter.tool()]), guard)
    with pytest.raises(ToolInputGuardrailTripwireTriggered) as caught:
        await run(agent, guard)
    assert [o == NOT_FOUND for o in model.outputs] == [True] * 5 + [False] * 2
    assert all(INVALID in o for o in model.outputs[5:])  # the 6th to the 11th: the guard's text
    error = caught.value.output.output_info
    assert isinstance(error, LoopAbortedError) and error.kind == "invalid"
    assert "agent main" in str(error) and "3 denials" in str(error)
    assert model.turns == 8 and counter.runs == 0  # stopped before a 9th model call


async def test_scattered_invalid_turns_among_real_work_change_nothing() -> None:
    bad = lambda: calls(("serch", {"q": "acme"}))  # noqa: E731
    turns = [bad, lambda: calls(("search", {"q": "a"})), bad, bad, lambda: calls(("search", {"q": "b"}))]
    turns += [bad] * 5 + [lambda: calls(("search", {"q": "c"}))] + [bad] * 5
    counter, model, guard = Counter(), ScriptedModel(scripted(turns)), Guard()
    result = await run(guard_agent(Agent(name="main", model=model, tools=[counter.tool()]), guard), guard)
    assert result.final_output == "done" and counter.runs == 3
    assert model.outputs.count(NOT_FOUND) == 13 and guard.stats()["denials"] == {}


async def test_other_tool_errors_go_to_the_next_formatter_and_own_hooks_still_run() -> None:
    class Seen(AgentHooks[Any]):
        starts = 0

        async def on_start(self, context: Any, agent: Any) -> None:
            Seen.starts += 1

    model, guard = ScriptedModel(scripted([lambda: calls(("serch", {}))])), Guard()
    agent = guard_agent(Agent(name="main", model=model, hooks=Seen()), guard)
    result = await run(agent, guard, then=lambda args: f"formatted: {args.kind}")
    assert model.outputs == ["formatted: tool_not_found"]  # allowed: the next formatter answers
    assert result.final_output == "done" and Seen.starts == 1


def warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if "ends a looping run" in r.getMessage()]


LATE = {"guard": {"abort_after_denials": 6}}  # 5 allowed, then 6 denials: stopped at call 11


async def test_a_max_turns_below_the_escalation_point_is_warned(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="loopfuse")
    model = ScriptedModel(forever("search", {"q": "acme"}))
    agent = guard_agent(Agent(name="main", model=model, tools=[Counter().tool()]), Guard.from_config(LATE))
    (warning,) = warnings(caplog)
    assert "max_turns=10" in warning and "tool call 11" in warning and "max_turns >= 11" in warning
    with pytest.raises(MaxTurnsExceeded):  # what the warning says: the SDK's limit comes first
        await Runner.run(agent, "find it", run_config=RunConfig(tracing_disabled=True))


async def test_no_warning_when_max_turns_fits(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="loopfuse")
    model = ScriptedModel(forever("search", {"q": "acme"}))
    guard = Guard.from_config(LATE)
    agent = guard_agent(Agent(name="main", model=model, tools=[Counter().tool()]), guard, max_turns=11)
    guard_agent(Agent(name="other", model=model), Guard())  # the defaults fit the SDK's default
    assert warnings(caplog) == []
    with pytest.raises(ToolInputGuardrailTripwireTriggered):
        await Runner.run(agent, "find it", max_turns=11, run_config=RunConfig(tracing_disabled=True))
    assert model.turns == 11


def test_a_guard_goes_when_its_agents_and_formatters_do() -> None:
    import gc
    import weakref

    guard = Guard()
    agent, formatter = guard_agent(Agent(name="main"), guard), invalid_turn_formatter(guard)
    alive = weakref.ref(guard)
    del guard, agent, formatter
    gc.collect()
    assert alive() is None


async def model_turns_until_stopped(per_turn: int) -> int:
    model, guard = ScriptedModel(lambda n: calls(*[("serch", {"q": "acme"})] * per_turn)), Guard()
    with pytest.raises(ToolInputGuardrailTripwireTriggered):
        await run(guard_agent(Agent(name="main", model=model, tools=[Counter().tool()]), guard), guard)
    return model.turns


async def test_a_turn_of_several_calls_of_missing_tools_is_one_invalid_turn() -> None:
    assert await model_turns_until_stopped(3) == await model_turns_until_stopped(1) == 8
