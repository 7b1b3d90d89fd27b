"""LangChain v1 / LangGraph: invalid turns (unknown tools, rejected arguments) and the
warning when a run's recursion_limit ends a loop before the guard does."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain.tools import ToolRuntime
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import tool
from langgraph.errors import GraphRecursionError
from langgraph.prebuilt import ToolNode

from loopfuse import Guard, LoopAbortedError
from loopfuse.adapters.langchain import LoopfuseMiddleware

from .scripted_langchain import ScriptedChatModel, calls, forever, scripted
from .test_langchain import CONFIG, Counter, tool_node_graph

NOT_A_TOOL = "is not a valid tool"
INVALID = "contained no usable tool call"


def agent_with(model: ScriptedChatModel, counter: Counter, guard: Guard) -> Any:
    return create_agent(model, [counter.tool()], middleware=[LoopfuseMiddleware(guard)])


def texts(model: ScriptedChatModel) -> list[str]:
    return [str(m.content) for m in model.seen]


def test_a_model_calling_a_missing_tool_again_and_again_is_stopped() -> None:
    counter, model = Counter(), ScriptedChatModel(script=forever("serch", {"q": "acme"}))
    result = agent_with(model, counter, Guard()).invoke({"messages": [HumanMessage("go")]}, CONFIG)
    seen = texts(model)
    assert [NOT_A_TOOL in t for t in seen] == [True] * 5 + [False] * 2  # LangGraph's own text first
    assert all(INVALID in t and "invalid limit 6" in t for t in seen[5:])  # the 6th..11th: the guard's
    final = result["messages"][-1]
    assert isinstance(final, AIMessage) and "Run stopped by loopfuse" in final.content
    assert "invalid" in final.content and "3 denials" in final.content  # the 8th in a row ended it
    assert model.turns == 8 and counter.runs == 0


def test_scattered_invalid_turns_among_real_work_change_nothing() -> None:
    def bad(n: int = 1) -> list[AIMessage]:  # each turn its own call id
        return [calls(("serch", {"q": "acme"})) for _ in range(n)]

    turns = [*bad(), calls(("search", {"q": "a"})), *bad(2), calls(("search", {"q": "b"}))]
    turns += [*bad(5), calls(("search", {"q": "c"})), *bad(5)]
    counter, model = Counter(), ScriptedChatModel(script=scripted(turns))
    guard = Guard()
    result = agent_with(model, counter, guard).invoke({"messages": [HumanMessage("go")]}, CONFIG)
    assert result["messages"][-1].content == "done"
    assert counter.runs == 3
    assert sum(NOT_A_TOOL in t for t in texts(model)) == 13 and not any(INVALID in t for t in texts(model))
    assert guard.stats()["denials"] == {}


def test_arguments_the_schema_rejects_are_invalid_turns() -> None:
    counter, model = Counter(), ScriptedChatModel(script=forever("search", {"query": "acme"}))
    guard = Guard.from_config({"invalid": {"limit": 2}})
    result = agent_with(model, counter, guard).invoke({"messages": [HumanMessage("go")]}, CONFIG)
    seen = texts(model)
    assert "Error invoking tool 'search'" in seen[0]  # LangGraph's validation error, the tool never ran
    assert all(INVALID in t for t in seen[1:]) and len(seen) == 3
    assert "Run stopped by loopfuse" in result["messages"][-1].content
    assert counter.runs == 0 and guard.stats()["allowed"] == 0  # never checked as calls
    assert guard.stats()["denials"] == {"invalid": 3}


def test_valid_calls_still_reach_the_tool() -> None:
    counter = Counter()
    model = ScriptedChatModel(script=scripted([calls(("search", {"q": "acme"}))]))
    result = agent_with(model, counter, Guard()).invoke({"messages": [HumanMessage("go")]}, CONFIG)
    assert counter.runs == 1 and result["messages"][-1].content == "done"


async def test_tool_node_graph_raises_on_an_invalid_streak_async() -> None:
    counter, model = Counter(), ScriptedChatModel(script=forever("serch", {"q": "acme"}))
    middleware = LoopfuseMiddleware(Guard.from_config({"invalid": {"limit": 3}}), on_escalate="raise")
    node = ToolNode([counter.tool()], awrap_tool_call=middleware.awrap_tool_call)
    with pytest.raises(LoopAbortedError, match="invalid") as caught:
        await tool_node_graph(model, node).ainvoke({"messages": [HumanMessage("go")]}, CONFIG)
    assert caught.value.kind == "invalid" and model.turns == 5  # limit 3, then 3 denials
    assert [INVALID in t for t in texts(model)] == [False, False, True, True]


def loop_in_agent(recursion_limit: int, guard: Guard, middleware: LoopfuseMiddleware | None = None) -> str:
    model = ScriptedChatModel(script=forever("search", {"q": "acme"}))
    middleware = middleware or LoopfuseMiddleware(guard)
    agent = create_agent(model, [Counter().tool()], middleware=[middleware])
    try:
        result = agent.invoke({"messages": [HumanMessage("go")]}, {"recursion_limit": recursion_limit})
    except GraphRecursionError:
        return "recursion limit"
    return "stopped" if "Run stopped by loopfuse" in result["messages"][-1].content else "other"


def warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if "ends a looping run" in r.getMessage()]


def test_a_recursion_limit_below_the_escalation_point_is_warned_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="loopfuse")
    middleware = LoopfuseMiddleware(Guard())
    assert loop_in_agent(27, Guard(), middleware) == "recursion limit"
    assert loop_in_agent(27, Guard(), middleware) == "recursion limit"
    (warning,) = warnings(caplog)
    assert "recursion_limit=27" in warning and "tool call 8" in warning and "recursion_limit >= 28" in warning


def test_no_warning_when_the_clean_stop_fits(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="loopfuse")
    assert loop_in_agent(28, Guard()) == "stopped"
    assert loop_in_agent(10_000, Guard()) == "stopped"
    assert warnings(caplog) == []


@pytest.mark.parametrize(("limit", "warned"), [(15, True), (16, False)])
def test_tool_node_graph_recursion_limit(caplog: pytest.LogCaptureFixture, limit: int, warned: bool) -> None:
    caplog.set_level(logging.WARNING, logger="loopfuse")
    model = ScriptedChatModel(script=forever("search", {"q": "acme"}))
    middleware = LoopfuseMiddleware(Guard(), on_escalate="raise")
    graph = tool_node_graph(model, ToolNode([Counter().tool()], wrap_tool_call=middleware.wrap_tool_call))
    with pytest.raises(GraphRecursionError if warned else LoopAbortedError):
        graph.invoke({"messages": [HumanMessage("go")]}, {"recursion_limit": limit})
    assert bool(warnings(caplog)) is warned


def test_tools_with_injected_arguments_are_judged_by_langgraph_alone() -> None:
    runs = []

    @tool
    def remember(note: str, runtime: ToolRuntime) -> str:
        """Remember a note."""
        runs.append(note)
        return "ok"

    model = ScriptedChatModel(script=scripted([calls(("remember", {"note": "n1"}))]))
    guard = Guard()
    agent = create_agent(model, [remember], middleware=[LoopfuseMiddleware(guard)])
    assert agent.invoke({"messages": [HumanMessage("go")]}, CONFIG)["messages"][-1].content == "done"
    assert runs == ["n1"] and guard.stats()["allowed"] == 1


def turns_until_stopped(per_turn: int) -> int:
    model = ScriptedChatModel(script=lambda n, m: calls(*[("serch", {"q": "acme"})] * per_turn))
    agent_with(model, Counter(), Guard()).invoke({"messages": [HumanMessage("go")]}, CONFIG)
    return model.turns


def test_a_turn_of_several_calls_of_missing_tools_is_one_invalid_turn() -> None:
    assert turns_until_stopped(3) == turns_until_stopped(1) == 8
