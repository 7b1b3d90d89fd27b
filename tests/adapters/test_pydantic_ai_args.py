"""Pydantic AI: tools taking or returning pydantic models and dataclasses, and tools failing
with ``ModelRetry`` or ``ToolFailed``, are judged like any other call."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from pydantic import BaseModel
from pydantic_ai import Agent, RunContext
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.exceptions import ModelRetry, ToolFailed
from pydantic_ai.messages import ToolCallPart
from pydantic_ai.tools import ToolDefinition

from loopfuse import Guard, LoopAbortedError
from loopfuse.adapters.pydantic_ai import LoopfuseCapability

from .test_pydantic_ai import DENIAL, ScriptedModel, Turn


class Query(BaseModel):
    text: str
    limit: int = 5


@dataclass
class DataQuery:
    text: str


class Rows(BaseModel):
    rows: list[int]


@dataclass
class DataRows:
    rows: list[int]


def searching(n: int) -> Turn:
    return [("search", {"query": {"text": "acme"}})]


async def stopped(agent: Agent[None, str], guard: Guard) -> LoopAbortedError:
    with pytest.raises(LoopAbortedError) as caught:
        await agent.run("find it")
    assert guard.stats()["fail_open"] == {}
    return caught.value


class ModelSearch:
    def __init__(self) -> None:
        self.runs = 0

    def search(self, query: Query) -> str:
        """Search the web."""
        self.runs += 1
        return "no results"


class DataSearch(ModelSearch):
    def search(self, query: DataQuery) -> str:  # type: ignore[override]
        """Search the web."""
        self.runs += 1
        return "no results"


@pytest.mark.parametrize("tool", [ModelSearch, DataSearch])
async def test_a_loop_with_a_model_argument_is_stopped(tool: type[ModelSearch]) -> None:
    model, guard, counter = ScriptedModel(searching), Guard(), tool()
    agent = Agent(model.model, capabilities=[LoopfuseCapability(guard)])
    agent.tool_plain(counter.search)
    assert (await stopped(agent, guard)).kind == "duplicate"
    assert counter.runs == 5 and model.turns == 8  # refused at the 6th (same_result_limit 5)


@pytest.mark.parametrize("rows", [Rows(rows=[1, 2]), DataRows(rows=[1, 2])])
async def test_a_model_result_is_reported(rows: Any) -> None:
    model, guard, runs = ScriptedModel(lambda n: [("search", {"q": "acme"})]), Guard(), []
    agent = Agent(model.model, capabilities=[LoopfuseCapability(guard)])

    @agent.tool_plain
    def search(q: str) -> Any:
        runs.append(q)
        return rows

    await stopped(agent, guard)
    assert len(runs) == 5  # the same result 5 times, not the window's 6 identical calls
    assert "returned the same result 5 times" in str(model.denials()[0].content)


@pytest.mark.parametrize("failure", [ModelRetry, ToolFailed])
async def test_a_tool_failing_again_and_again_is_stopped(failure: type[Exception]) -> None:
    model, guard, runs = ScriptedModel(lambda n: [("search", {"q": "acme"})]), Guard(), []
    agent = Agent(model.model, capabilities=[LoopfuseCapability(guard)], retries=100)

    @agent.tool_plain
    def search(q: str) -> str:
        runs.append(q)
        raise failure("backend down")

    assert (await stopped(agent, guard)).kind == "same_error"
    assert len(runs) == 4  # refused at the 5th (same_error identical_limit 4)
    refused = [DENIAL in str(r.content) for r in model.results]
    assert refused == [False] * 4 + [True] * 2  # the 3rd denial stops the run


class RetryOnError(AbstractCapability[Any]):
    """Turns a tool's error into ``ModelRetry``, as a capability may."""

    async def on_tool_execute_error(
        self,
        ctx: RunContext[Any],
        *,
        call: ToolCallPart,
        tool_def: ToolDefinition,
        args: Any,
        error: Exception,
    ) -> Any:
        raise ModelRetry(f"try again: {error}")


@pytest.mark.parametrize("first", [True, False])
async def test_an_error_another_capability_turns_into_a_retry_still_counts_as_a_failure(first: bool) -> None:
    model, guard, runs = ScriptedModel(lambda n: [("search", {"q": "acme"})]), Guard(), []
    capabilities = [LoopfuseCapability(guard), RetryOnError()]
    agent = Agent(model.model, capabilities=capabilities if first else capabilities[::-1], retries=100)

    @agent.tool_plain
    def search(q: str) -> str:
        runs.append(q)
        raise RuntimeError("backend down")

    assert (await stopped(agent, guard)).kind == "same_error"
    assert len(runs) == 4  # each failure counted once
