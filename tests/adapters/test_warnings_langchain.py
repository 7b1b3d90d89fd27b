"""LangChain / LangGraph: a warning reaches the model inside the tool's result; the calls of
one model turn (one AIMessage) are one round."""

from __future__ import annotations

import pytest
from langchain.agents import create_agent
from langchain.agents.middleware.types import InputAgentState
from langchain_core.messages import HumanMessage, ToolMessage
from langgraph.prebuilt import ToolNode

from loopfuse import Guard
from loopfuse.adapters.langchain import LoopfuseMiddleware

from .scripted_langchain import ScriptedChatModel, calls, scripted
from .test_langchain import CONFIG, Counter, tool_node_graph

WARN = {"circuit_breaker": {"warn_at": 2}}
NOTICE = "[loopfuse warning: this search call ran"


def assert_warned_on_the_third_call(seen: list[ToolMessage]) -> None:
    first, second, third = (str(m.content) for m in seen[:3])
    assert first == second == "3 results"
    assert third.startswith("3 results\n\n" + NOTICE)  # the result, then the notice
    assert all(m.status == "success" for m in seen[:3])


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_create_agent_the_third_identical_call_runs_and_its_result_carries_the_warning(
    mode: str,
) -> None:
    counter = Counter()
    model = ScriptedChatModel(script=scripted([calls(("search", {"q": "x"})) for _ in range(3)]))
    agent = create_agent(model, [counter.tool()], middleware=[LoopfuseMiddleware(Guard.from_config(WARN))])
    state: InputAgentState = {"messages": [HumanMessage("go")]}
    result = agent.invoke(state, CONFIG) if mode == "sync" else await agent.ainvoke(state, CONFIG)
    assert counter.runs == 3
    assert_warned_on_the_third_call(model.seen)
    assert result["messages"][-1].content == "done"


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_tool_node_wrapper_delivers_the_warning(mode: str) -> None:
    counter, guard = Counter(), Guard.from_config(WARN)
    model = ScriptedChatModel(script=scripted([calls(("search", {"q": "x"})) for _ in range(3)]))
    middleware = LoopfuseMiddleware(guard)
    if mode == "sync":
        node = ToolNode([counter.tool()], wrap_tool_call=middleware.wrap_tool_call)
        tool_node_graph(model, node).invoke({"messages": [HumanMessage("go")]}, CONFIG)
    else:
        node = ToolNode([counter.tool()], awrap_tool_call=middleware.awrap_tool_call)
        await tool_node_graph(model, node).ainvoke({"messages": [HumanMessage("go")]}, CONFIG)
    assert counter.runs == 3
    assert_warned_on_the_third_call(model.seen)
    assert guard.stats()["warnings"] == {"duplicate": 1}


async def run_turns(per_turn: int, mode: str) -> tuple[int, list[str]]:
    """A model asking for the same search ``per_turn`` times in each turn: how often the tool
    ran, and the status of each result."""
    counter = Counter()
    guard = Guard.from_config({"circuit_breaker": {"duplicate_limit": 3}})
    model = ScriptedChatModel(script=lambda n, messages: calls(*[("search", {"q": "x"})] * per_turn))
    agent = create_agent(model, [counter.tool()], middleware=[LoopfuseMiddleware(guard)])
    state: InputAgentState = {"messages": [HumanMessage("go")]}
    result = agent.invoke(state, CONFIG) if mode == "sync" else await agent.ainvoke(state, CONFIG)
    return counter.runs, [m.status for m in result["messages"] if isinstance(m, ToolMessage)]


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_identical_parallel_calls_of_one_turn_count_once(mode: str) -> None:
    alone, _ = await run_turns(1, mode)
    runs, statuses = await run_turns(2, mode)
    assert alone == 4  # one call a turn: refused after 4 runs
    assert runs == 2 * alone  # two identical calls a turn: as many turns, each call ran
    assert statuses[: 2 * alone + 2] == ["success"] * 2 * alone + ["error"] * 2
