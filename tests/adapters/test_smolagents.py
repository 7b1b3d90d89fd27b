"""The smolagents adapter, end to end: real agents with a scripted ``Model``."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Sequence
from typing import Any

import pytest

pytest.importorskip("smolagents")

# smolagents ships no type information: its names are Any here.
from smolagents import CodeAgent, Model, Tool, ToolCallingAgent  # type: ignore[import-untyped]
from smolagents.models import (  # type: ignore[import-untyped]
    ChatMessage,
    ChatMessageToolCall,
    ChatMessageToolCallFunction,
    MessageRole,
)

from loopfuse import Guard, LoopAbortedError
from loopfuse.adapters.smolagents import guard_agent

Turn = Sequence[tuple[str, dict[str, Any]]] | str
_ids = itertools.count(1)


class ScriptedModel(Model):  # type: ignore[misc]  # Model is Any: smolagents is untyped
    """Answers with ``plan``'s turns in order (tool calls, or code text), then the last forever."""

    def __init__(self, plan: Sequence[Turn]) -> None:
        super().__init__(model_id="scripted")
        self.plan = plan
        self.calls = 0
        self.prompts: list[str] = []

    def generate(self, messages: list[Any], stop_sequences: Any = None, **kwargs: Any) -> ChatMessage:
        self.prompts.append(str(messages))
        turn = self.plan[min(self.calls, len(self.plan) - 1)]
        self.calls += 1
        if isinstance(turn, str):
            return ChatMessage(role=MessageRole.ASSISTANT, content=turn)
        return ChatMessage(role=MessageRole.ASSISTANT, content="", tool_calls=[_call(n, a) for n, a in turn])


def _call(name: str, args: dict[str, Any]) -> ChatMessageToolCall:
    function = ChatMessageToolCallFunction(name=name, arguments=args)
    return ChatMessageToolCall(id=f"call_{next(_ids):04d}", type="function", function=function)


class ProbeTool(Tool):  # type: ignore[misc]  # Tool is Any: smolagents is untyped
    name = "probe"
    description = "Look something up."
    inputs = {"q": {"type": "string", "description": "what to look up"}}  # noqa: RUF012
    output_type = "string"

    def __init__(self) -> None:
        super().__init__()
        self.runs: list[str] = []
        self._lock = threading.Lock()

    def forward(self, q: str) -> str:
        with self._lock:
            self.runs.append(q)
            return "the same answer"  # a looping call gets the same result each time


def strict_guard() -> Guard:
    return Guard.from_config(
        {"circuit_breaker": {"duplicate_limit": 2, "result_limit": 2}, "guard": {"abort_after_denials": 3}}
    )


def observations(agent: Any) -> list[str]:
    return [str(s.observations) for s in agent.memory.steps if getattr(s, "observations", None)]


def test_a_looping_model_is_denied_then_the_run_is_stopped() -> None:
    probe, model = ProbeTool(), ScriptedModel([[("probe", {"q": "weather in Paris"})]])
    agent = guard_agent(
        ToolCallingAgent(tools=[probe], model=model, max_steps=50, verbosity_level=0), strict_guard()
    )

    with pytest.raises(LoopAbortedError, match="stuck in a loop") as raised:
        agent.run("go")

    assert "probe" in str(raised.value) and "Paris" not in str(raised.value)
    assert len(probe.runs) == 2
    denials = [o for o in observations(agent) if o.startswith("loopfuse refused this probe call")]
    assert len(denials) == 2  # the third denial ends the run before the model reads it
    assert all("Paris" not in d for d in denials)
    assert "loopfuse refused this probe call" in model.prompts[-1]
    assert model.calls == 5


def test_a_continuation_after_a_stop_runs_when_the_model_moved_on() -> None:
    """``reset=False`` keeps the counts, not the last run's stop."""
    probe, model = ProbeTool(), ScriptedModel([[("probe", {"q": "x"})]])
    agent = guard_agent(
        ToolCallingAgent(tools=[probe], model=model, max_steps=30, verbosity_level=-1), Guard()
    )
    with pytest.raises(LoopAbortedError):
        agent.run("look up x")
    model.plan, model.calls = [[("probe", {"q": "y"})], [("final_answer", {"answer": "done"})]], 0
    assert agent.run("never mind, look up y", reset=False) == "done"
    assert probe.runs[-1] == "y"


def test_a_code_agent_is_stopped_the_same_way() -> None:
    probe = ProbeTool()
    model = ScriptedModel(["Thought: look again.\n<code>\nprint(probe(q='x'))\n</code>"])
    agent = guard_agent(
        CodeAgent(tools=[probe], model=model, max_steps=50, verbosity_level=0), strict_guard()
    )

    with pytest.raises(LoopAbortedError):
        agent.run("go")

    assert len(probe.runs) == 2
    assert model.calls == 5


def test_a_code_agent_looping_inside_one_step_is_stopped() -> None:
    """A CodeAgent's calls run one after another in its code: a loop there counts every call,
    unlike the parallel calls of one ToolCallingAgent step."""
    probe, guard = ProbeTool(), Guard()
    code = "Thought: poll.\n<code>\nfor _ in range(1000):\n    answer = probe(q='x')\nfinal_answer(answer)\n</code>"
    agent = guard_agent(
        CodeAgent(tools=[probe], model=ScriptedModel([code]), max_steps=5, verbosity_level=0), guard
    )

    with pytest.raises(LoopAbortedError, match="probe"):
        agent.run("go")

    assert len(probe.runs) == 5  # the same result 5 times in a row: the 6th call is refused
    assert guard.stats()["allowed"] == 5


class FailingProbe(ProbeTool):
    def forward(self, q: str) -> str:
        self.runs.append(q)
        raise RuntimeError(f"{q} is not a page")


def test_different_failures_are_not_the_same_error() -> None:
    probe, guard = FailingProbe(), Guard()
    names = [
        "alpha",
        "bravo",
        "charlie",
        "delta",
        "echo",
        "foxtrot",
        "golf",
        "hotel",
        "india",
        "juliett",
        "kilo",
        "lima",
    ]
    steps = [[("probe", {"q": name})] for name in names]
    model = ScriptedModel([*steps, [("final_answer", {"answer": "none found"})]])
    agent = guard_agent(ToolCallingAgent(tools=[probe], model=model, max_steps=20, verbosity_level=0), guard)

    assert agent.run("go") == "none found"
    assert len(probe.runs) == 12  # each failed differently: no "same error" refusal
    assert guard.stats()["denials"] == {}


def test_a_healthy_run_with_legitimate_repeats_is_untouched() -> None:
    probe, guard = ProbeTool(), Guard()
    steps = [[("probe", {"q": q})] for q in ("status", "deploy", "status", "status")]
    model = ScriptedModel([*steps, [("final_answer", {"answer": "deployed"})]])
    agent = guard_agent(ToolCallingAgent(tools=[probe], model=model, max_steps=10, verbosity_level=0), guard)

    assert agent.run("go") == "deployed"
    assert probe.runs == ["status", "deploy", "status", "status"]
    assert not any("loopfuse" in o for o in observations(agent))
    assert agent.run("again") == "deployed"  # a new run is a new scope


def test_parallel_identical_calls_in_one_turn_are_counted_exactly() -> None:
    probe = ProbeTool()
    model = ScriptedModel([[("probe", {"q": "x"})] * 8, [("final_answer", {"answer": "done"})]])
    agent = ToolCallingAgent(tools=[probe], model=model, max_steps=5, verbosity_level=0, max_tool_threads=8)
    limits = {"duplicate_limit": 2, "result_limit": 2}
    guard_agent(agent, Guard.from_config({"circuit_breaker": limits, "guard": {"abort_after_denials": 0}}))

    assert agent.run("go") == "done"
    assert len(probe.runs) == 8  # identical calls of one step (one round) count once
    assert observations(agent)[0].count("loopfuse refused this probe call") == 0


@pytest.mark.parametrize(("share", "helper_runs"), [(False, 2), (True, 0)])
def test_managed_agents_get_their_own_state_unless_shared(share: bool, helper_runs: int) -> None:
    main_probe, helper_probe = ProbeTool(), ProbeTool()
    helper_plan: Sequence[Turn] = [[("probe", {"q": "same"})]] * 2 + [[("final_answer", {"answer": "found"})]]
    helper = ToolCallingAgent(
        tools=[helper_probe],
        model=ScriptedModel(helper_plan),
        name="helper",
        description="helps",
        max_steps=5,
        verbosity_level=0,
    )
    main_plan: Sequence[Turn] = [[("probe", {"q": "same"})]] * 2 + [
        [("helper", {"task": "look"})],
        [("final_answer", {"answer": "done"})],
    ]
    main = ToolCallingAgent(
        tools=[main_probe],
        model=ScriptedModel(main_plan),
        managed_agents=[helper],
        max_steps=6,
        verbosity_level=0,
    )
    guard_agent(main, strict_guard(), share_subagents=share)

    assert main.run("go") == "done"
    assert len(main_probe.runs) == 2
    assert len(helper_probe.runs) == helper_runs
