"""Pydantic AI (v2) end to end: Agent.run with a FunctionModel, the guard as a capability."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import pytest
from pydantic_ai import Agent, RunContext
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from loopfuse import Guard, LoopAbortedError
from loopfuse.adapters.pydantic_ai import LoopfuseCapability

SECRET = "secret-query-7"
LIMITS = {"circuit_breaker": {"duplicate_limit": 3, "result_limit": 3}, "guard": {"abort_after_denials": 4}}
DENIAL = "loopfuse refused this search call"
_ids = itertools.count()
Turn = list[tuple[str, dict[str, Any]]]


class ScriptedModel:
    """A FunctionModel playing ``script(n)`` on turn n; records the tool results it was sent."""

    def __init__(self, script: Callable[[int], Turn | None]) -> None:
        self.script = script
        self.turns = 0
        self.results: list[ToolReturnPart] = []
        self.model = FunctionModel(self._respond)

    def _respond(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        last = messages[-1]
        if isinstance(last, ModelRequest):
            self.results += [p for p in last.parts if isinstance(p, ToolReturnPart)]
        turn = self.script(self.turns)
        self.turns += 1
        if turn is None:
            return ModelResponse(parts=[TextPart("done")])
        return ModelResponse(parts=[ToolCallPart(n, a, tool_call_id=f"c{next(_ids)}") for n, a in turn])

    def denials(self) -> list[ToolReturnPart]:
        return [r for r in self.results if r.outcome == "failed"]


def forever(n: int) -> Turn:
    return [("search", {"q": SECRET})]


def playing(turns: list[Turn]) -> Callable[[int], Turn | None]:
    return lambda n: turns[n] if n < len(turns) else None


class Counter:
    def __init__(self) -> None:
        self.runs = 0

    def search(self, q: str) -> str:
        """Search the web."""
        self.runs += 1
        return "3 results"  # a looping search gets the same answer each time


def make_agent(model: ScriptedModel, guard: Guard, counter: Counter) -> Agent[None, str]:
    agent = Agent(model.model, capabilities=[LoopfuseCapability(guard)])
    agent.tool_plain(counter.search)
    return agent


async def test_endless_loop_runs_the_tool_three_times_then_raises() -> None:
    counter, model = Counter(), ScriptedModel(forever)
    agent = make_agent(model, Guard.from_config(LIMITS), counter)
    with pytest.raises(LoopAbortedError) as caught:
        await agent.run("find it")
    assert counter.runs == 3
    assert model.turns == 7
    denials = model.denials()
    assert len(denials) == 3 and all(DENIAL in str(d.content) for d in denials)
    assert all(SECRET not in str(d.content) for d in denials)
    message = str(caught.value)
    assert "search" in message and "4 denials" in message and "pydantic-ai run" in message


@pytest.mark.usefixtures("sync_run_loop")
def test_endless_loop_sync_run() -> None:
    counter, model = Counter(), ScriptedModel(forever)
    with pytest.raises(LoopAbortedError):
        make_agent(model, Guard.from_config(LIMITS), counter).run_sync("find it")
    assert counter.runs == 3


async def test_denials_do_not_spend_the_retry_budget() -> None:
    counter, model = Counter(), ScriptedModel(forever)
    guard = Guard.from_config(
        {"circuit_breaker": {"duplicate_limit": 1}, "guard": {"abort_after_denials": 8}}
    )
    with pytest.raises(LoopAbortedError):
        await make_agent(model, guard, counter).run("find it")
    assert len(model.denials()) == 7  # far past the default of 1 retry, and no UnexpectedModelBehavior


async def test_healthy_run_with_legitimate_repeats_is_untouched() -> None:
    counter = Counter()
    model = ScriptedModel(
        playing(
            [
                [("search", {"q": "a"})],
                [("search", {"q": "b"}), ("search", {"q": "a"})],
                [("search", {"q": "a"})],
                [("search", {"q": "a"})],
            ]
        )
    )
    result = await make_agent(model, Guard(), counter).run("find it")
    assert result.output == "done"
    assert counter.runs == 5
    assert model.denials() == []


async def test_runs_do_not_share_state() -> None:
    counter, guard = Counter(), Guard.from_config(LIMITS)
    agent = make_agent(ScriptedModel(forever), guard, counter)
    for _ in range(2):
        with pytest.raises(LoopAbortedError):
            await agent.run("find it")
    assert counter.runs == 6


async def test_parallel_calls_in_one_turn_count_exactly() -> None:
    counter = Counter()
    model = ScriptedModel(playing([[("search", {"q": SECRET})] * 5]))
    result = await make_agent(model, Guard.from_config(LIMITS), counter).run("find it")
    assert result.output == "done"
    assert counter.runs == 5  # identical calls of one model response (one round) count once
    assert [r.outcome for r in model.results] == ["success"] * 5


def add_delegate(outer: Agent[None, str], inner: Agent[None, str], answer: str | None = None) -> None:
    """Give ``outer`` a tool ``delegate`` that runs ``inner`` on the task and returns its
    output, or ``answer`` when given."""

    @outer.tool
    async def delegate(ctx: RunContext[None], task: str) -> str:
        """Hand the task to a sub-agent."""
        try:
            output = str((await inner.run(task, usage=ctx.usage)).output)
        except LoopAbortedError as exc:
            output = f"the sub-agent was stopped: {exc}"
        return output if answer is None else answer


async def test_sub_agent_run_inside_a_tool_has_its_own_state() -> None:
    counter, guard = Counter(), Guard.from_config(LIMITS)
    inner = make_agent(ScriptedModel(forever), guard, counter)
    outer_model = ScriptedModel(playing([forever(0), forever(0), [("delegate", {"task": "x"})]]))
    outer = make_agent(outer_model, guard, counter)
    add_delegate(outer, inner)

    result = await outer.run("go")
    assert result.output == "done"
    assert counter.runs == 2 + 3
    assert "stopped" in str(outer_model.results[-1].content)
