"""smolagents: a warning reaches the model inside the observation (the tool's result); the
calls of one step are one round."""

from __future__ import annotations

import pytest

pytest.importorskip("smolagents")

from smolagents import ToolCallingAgent  # type: ignore[import-untyped]

from loopfuse import Guard
from loopfuse.adapters.smolagents import guard_agent

from .test_smolagents import ProbeTool, ScriptedModel, observations

NOTICE = "[loopfuse warning: this probe call ran"
DENIAL = "loopfuse refused this probe call"


def test_the_third_identical_call_runs_and_its_observation_carries_the_warning() -> None:
    probe = ProbeTool()
    model = ScriptedModel([[("probe", {"q": "x"})]] * 3 + [[("final_answer", {"answer": "done"})]])
    agent = ToolCallingAgent(tools=[probe], model=model, max_steps=10, verbosity_level=0)
    guard_agent(agent, Guard.from_config({"circuit_breaker": {"warn_at": 2}}))
    assert agent.run("go") == "done"
    assert probe.runs == ["x"] * 3
    seen = observations(agent)
    assert [NOTICE in o for o in seen[:3]] == [False, False, True]
    assert "the same answer\n\n" + NOTICE in seen[2]
    assert NOTICE in model.prompts[3]  # what the model read next


def runs_until_refused(per_step: int) -> tuple[int, list[int]]:
    probe = ProbeTool()
    model = ScriptedModel([[("probe", {"q": "x"})] * per_step] * 5 + [[("final_answer", {"answer": "done"})]])
    agent = ToolCallingAgent(tools=[probe], model=model, max_steps=10, verbosity_level=0, max_tool_threads=4)
    limits = {"circuit_breaker": {"duplicate_limit": 3}, "guard": {"abort_after_denials": 0}}
    guard_agent(agent, Guard.from_config(limits))
    assert agent.run("go") == "done"
    return len(probe.runs), [o.count(DENIAL) for o in observations(agent)]


def test_identical_parallel_calls_of_one_step_count_once() -> None:
    alone, _ = runs_until_refused(1)
    runs, denials = runs_until_refused(2)
    assert alone == 4  # one call a step: refused after 4 runs
    assert runs == 2 * alone  # two identical calls a step: as many steps, each call ran
    assert denials[: alone + 1] == [0] * alone + [2]
