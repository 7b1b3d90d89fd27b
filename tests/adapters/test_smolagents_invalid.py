"""smolagents: replies with no usable tool call as invalid turns, and the warning when
max_steps ends a loop before the guard does."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import pytest

pytest.importorskip("smolagents")

from smolagents import CodeAgent, ToolCallingAgent  # type: ignore[import-untyped]

from loopfuse import Guard, LoopAbortedError
from loopfuse.adapters.smolagents import guard_agent

from .test_smolagents import ProbeTool, ScriptedModel, Turn

INVALID = "contained no usable tool call"
UNKNOWN = "Unknown tool serch"


def errors(agent: Any) -> list[str]:
    return [str(s.error) for s in agent.memory.steps if getattr(s, "error", None) is not None]


def calling_agent(
    plan: Sequence[Turn], guard: Guard, max_steps: int = 40
) -> tuple[Any, ProbeTool, ScriptedModel]:
    probe, model = ProbeTool(), ScriptedModel(plan)
    agent = ToolCallingAgent(tools=[probe], model=model, max_steps=max_steps, verbosity_level=0)
    return guard_agent(agent, guard), probe, model


def test_a_model_calling_a_missing_tool_again_and_again_is_stopped() -> None:
    agent, probe, model = calling_agent([[("serch", {"q": "x"})]], Guard())
    with pytest.raises(LoopAbortedError, match="invalid") as raised:
        agent.run("go")
    seen = errors(agent)
    assert [UNKNOWN in e for e in seen] == [True] * 5 + [False] * 2  # the 8th step stopped the run
    assert all(INVALID in e for e in seen[5:])  # the step's error text, as the model reads it next
    assert INVALID in model.prompts[-1] and "3 denials" in str(raised.value)
    assert model.calls == 8 and probe.runs == []


def test_scattered_invalid_turns_among_real_work_change_nothing() -> None:
    bad: Turn = [("serch", {"q": "x"})]
    steps = [
        bad,
        [("probe", {"q": "a"})],
        bad,
        bad,
        [("probe", {"q": "b"})],
        *[bad] * 5,
        [("probe", {"q": "c"})],
    ]
    agent, probe, _ = calling_agent([*steps, *[bad] * 5, [("final_answer", {"answer": "done"})]], Guard())
    assert agent.run("go") == "done"
    assert probe.runs == ["a", "b", "c"]
    assert sum(UNKNOWN in e for e in errors(agent)) == 13 and not any(INVALID in e for e in errors(agent))


def test_arguments_the_tool_rejects_are_invalid_turns() -> None:
    guard = Guard.from_config({"invalid": {"limit": 2}})
    agent, probe, model = calling_agent([[("probe", {"query": "x"})]], guard)
    with pytest.raises(LoopAbortedError):
        agent.run("go")
    assert [INVALID in e for e in errors(agent)] == [False, True, True]
    assert model.calls == 4 and probe.runs == [] and guard.stats()["allowed"] == 0


def test_a_code_agent_that_writes_no_code_is_stopped() -> None:
    probe, model = ProbeTool(), ScriptedModel(["Thought: I will think about it some more."])
    guard = Guard.from_config({"invalid": {"limit": 2}})
    agent = guard_agent(CodeAgent(tools=[probe], model=model, max_steps=30, verbosity_level=0), guard)
    with pytest.raises(LoopAbortedError, match="invalid"):
        agent.run("go")
    assert model.calls == 4


def warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if "ends a looping run" in r.getMessage()]


def test_max_steps_below_the_escalation_point_is_warned(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="loopfuse")
    agent, probe, _ = calling_agent([[("probe", {"q": "x"})]], Guard(), max_steps=7)
    (warning,) = warnings(caplog)
    assert "max_steps=7" in warning and "tool call 8" in warning and "max_steps >= 8" in warning
    agent.run("go")  # what the warning says: smolagents ends the run, no LoopAbortedError
    assert len(probe.runs) == 5


def test_a_run_with_fewer_steps_is_warned_once(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="loopfuse")
    agent, _, _ = calling_agent([[("final_answer", {"answer": "done"})]], Guard(), max_steps=20)
    assert warnings(caplog) == []
    agent.run("go", max_steps=6)
    agent.run("go", max_steps=5)
    (warning,) = warnings(caplog)
    assert "max_steps=6" in warning
