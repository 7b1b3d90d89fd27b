"""LangChain v1 / LangGraph end to end: create_agent and a hand-built ToolNode graph."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain.agents.middleware.types import InputAgentState
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition

from loopfuse import Guard, LoopAbortedError
from loopfuse.adapters.langchain import LoopfuseMiddleware

from .scripted_langchain import Agent, ScriptedChatModel, ToolGraph, calls, forever, scripted

SECRET = "secret-query-7"
LIMITS = {"circuit_breaker": {"duplicate_limit": 3, "result_limit": 3}, "guard": {"abort_after_denials": 4}}
CONFIG: RunnableConfig = {"recursion_limit": 100}


class Counter:
    def __init__(self) -> None:
        self.runs = 0
        self._lock = threading.Lock()

    def tool(self) -> BaseTool:
        @tool
        def search(q: str) -> str:
            """Search the web."""
            with self._lock:
                self.runs += 1
            return "3 results"  # a looping search gets the same answer each time

        return search


def loop_agent(guard: Guard, counter: Counter, **kwargs: Any) -> tuple[Agent, ScriptedChatModel]:
    model = ScriptedChatModel(script=forever("search", {"q": SECRET}))
    agent = create_agent(model, [counter.tool()], middleware=[LoopfuseMiddleware(guard)], **kwargs)
    return agent, model


def assert_stopped(result: dict[str, Any], model: ScriptedChatModel) -> None:
    final = result["messages"][-1]
    assert isinstance(final, AIMessage) and not final.tool_calls
    assert "loopfuse" in final.content and "search" in final.content and "loop" in final.content
    denials = [m for m in model.seen if m.status == "error"]
    assert len(denials) == 3  # denials 1..3 reached the model; the 4th ended the run
    assert all("loopfuse refused this search call" in m.content for m in denials)
    assert all(SECRET not in str(m.content) for m in result["messages"] if not isinstance(m, AIMessage))
    assert SECRET not in final.content


def test_endless_loop_runs_the_tool_three_times_then_ends_the_run() -> None:
    counter = Counter()
    agent, model = loop_agent(Guard.from_config(LIMITS), counter)
    result = agent.invoke({"messages": [HumanMessage("find it")]}, CONFIG)
    assert counter.runs == 3
    assert model.turns == 7
    assert_stopped(result, model)


async def test_endless_loop_async() -> None:
    counter = Counter()
    agent, model = loop_agent(Guard.from_config(LIMITS), counter)
    result = await agent.ainvoke({"messages": [HumanMessage("find it")]}, CONFIG)
    assert counter.runs == 3
    assert_stopped(result, model)


def test_default_limits_stop_the_loop_inside_langgraphs_default_recursion_limit() -> None:
    counter = Counter()
    agent, model = loop_agent(Guard(), counter)
    result = agent.invoke({"messages": [HumanMessage("find it")]})  # LangGraph's default recursion_limit
    # The adapter reports results: the same search returning the same result five times in
    # a row is the default same_result_limit; the sixth is refused.
    assert counter.runs == 5
    assert model.turns == 5 + 3
    assert "3 denials" in result["messages"][-1].content


def test_healthy_run_with_legitimate_repeats_is_untouched() -> None:
    counter = Counter()
    turns = [calls(("search", {"q": "a"})), calls(("search", {"q": "b"}), ("search", {"q": "a"}))]
    turns += [calls(("search", {"q": "a"})) for _ in range(2)]
    model = ScriptedChatModel(script=scripted(turns))
    guard = Guard()
    agent = create_agent(model, [counter.tool()], middleware=[LoopfuseMiddleware(guard)])
    result = agent.invoke({"messages": [HumanMessage("find it")]}, CONFIG)
    assert counter.runs == 5
    assert result["messages"][-1].content == "done"
    assert all(m.status == "success" for m in model.seen)
    assert guard.stats()["allowed"] == 5


def test_threads_do_not_share_state() -> None:
    counter = Counter()
    agent, _ = loop_agent(Guard.from_config(LIMITS), counter, checkpointer=InMemorySaver())
    for thread in ("t1", "t2"):
        agent.invoke({"messages": [HumanMessage("go")]}, {**CONFIG, "configurable": {"thread_id": thread}})
    assert counter.runs == 6


def test_runs_without_thread_do_not_share_state() -> None:
    counter = Counter()
    agent, _ = loop_agent(Guard.from_config(LIMITS), counter)
    agent.invoke({"messages": [HumanMessage("go")]}, CONFIG)
    agent.invoke({"messages": [HumanMessage("go")]}, CONFIG)
    assert counter.runs == 6


def test_sub_agent_inside_a_tool_has_its_own_state() -> None:
    counter = Counter()
    guard = Guard.from_config(LIMITS)
    inner, _ = loop_agent(guard, counter)

    @tool
    def delegate(task: str) -> str:
        """Hand the task to a sub-agent."""
        return str(inner.invoke({"messages": [HumanMessage(task)]}, CONFIG)["messages"][-1].content)

    outer_turns = [calls(("search", {"q": SECRET})) for _ in range(2)] + [calls(("delegate", {"task": "x"}))]
    outer_model = ScriptedChatModel(script=scripted(outer_turns))
    outer = create_agent(
        outer_model,
        [counter.tool(), delegate],
        middleware=[LoopfuseMiddleware(guard)],
        checkpointer=InMemorySaver(),
    )
    result = outer.invoke({"messages": [HumanMessage("go")]}, {**CONFIG, "configurable": {"thread_id": "t"}})
    assert counter.runs == 2 + 3
    assert "Run stopped by loopfuse" in outer_model.seen[-1].content
    assert result["messages"][-1].content == "done"


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_parallel_calls_in_one_turn_count_exactly(mode: str) -> None:
    counter = Counter()
    model = ScriptedChatModel(script=scripted([calls(*[("search", {"q": SECRET})] * 5)]))
    agent = create_agent(model, [counter.tool()], middleware=[LoopfuseMiddleware(Guard.from_config(LIMITS))])
    state: InputAgentState = {"messages": [HumanMessage("go")]}
    result = agent.invoke(state, CONFIG) if mode == "sync" else await agent.ainvoke(state, CONFIG)
    assert counter.runs == 5  # identical calls of one model turn (one round) count once
    results = [m for m in result["messages"] if isinstance(m, ToolMessage)]
    assert [m.status for m in results] == ["success"] * 5
    assert result["messages"][-1].content == "done"


def tool_node_graph(model: ScriptedChatModel, node: ToolNode, checkpointer: Any = None) -> ToolGraph:
    graph = StateGraph(MessagesState)
    graph.add_node("agent", lambda state: {"messages": [model.invoke(state["messages"])]})
    graph.add_node("tools", node)
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", tools_condition)
    graph.add_edge("tools", "agent")
    return graph.compile(checkpointer=checkpointer)


def test_langgraph_tool_node_denies_and_raises_on_escalation() -> None:
    counter = Counter()
    model = ScriptedChatModel(script=forever("search", {"q": SECRET}))
    middleware = LoopfuseMiddleware(Guard.from_config(LIMITS), on_escalate="raise")
    node = ToolNode([counter.tool()], wrap_tool_call=middleware.wrap_tool_call)
    with pytest.raises(LoopAbortedError, match="search") as caught:
        tool_node_graph(model, node).invoke({"messages": [HumanMessage("go")]}, CONFIG)
    assert counter.runs == 3
    assert [m.status for m in model.seen].count("error") == 3
    assert SECRET not in str(caught.value)


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_a_tool_node_handling_every_error_still_stops_the_graph(mode: str) -> None:
    """``handle_tool_errors=True`` turns a tool's exceptions into messages for the model; the
    escalation must still end the graph, not reach the model and loop to the recursion limit."""
    counter = Counter()
    model = ScriptedChatModel(script=forever("search", {"q": SECRET}))
    middleware = LoopfuseMiddleware(Guard.from_config(LIMITS), on_escalate="raise")
    node = ToolNode(
        [counter.tool()],
        handle_tool_errors=True,
        wrap_tool_call=middleware.wrap_tool_call,
        awrap_tool_call=middleware.awrap_tool_call,
    )
    graph = tool_node_graph(model, node)
    with pytest.raises(LoopAbortedError, match="search"):
        if mode == "sync":
            graph.invoke({"messages": [HumanMessage("go")]}, CONFIG)
        else:
            await graph.ainvoke({"messages": [HumanMessage("go")]}, CONFIG)
    assert counter.runs == 3
    assert [m.status for m in model.seen].count("error") == 3


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_a_thread_stopped_by_a_raise_starts_its_next_question_afresh(mode: str) -> None:
    """A hand-built graph counts a thread's invocations together; once the guard stopped one by
    raising, the run is over: the thread's next question may make the same search again."""
    counter, looping = Counter(), [True]

    def script(n: int, messages: list[Any]) -> AIMessage:
        if looping[0] or not isinstance(messages[-1], ToolMessage):
            return calls(("search", {"q": SECRET}))
        return AIMessage(content="answered")

    middleware = LoopfuseMiddleware(Guard.from_config(LIMITS), on_escalate="raise")
    node = ToolNode(
        [counter.tool()], wrap_tool_call=middleware.wrap_tool_call, awrap_tool_call=middleware.awrap_tool_call
    )
    graph = tool_node_graph(ScriptedChatModel(script=script), node, InMemorySaver())
    config: RunnableConfig = {**CONFIG, "configurable": {"thread_id": "t"}}

    async def ask(question: str) -> Any:
        given: Any = {"messages": [HumanMessage(question)]}
        return graph.invoke(given, config) if mode == "sync" else await graph.ainvoke(given, config)

    with pytest.raises(LoopAbortedError):
        await ask("find it")
    looping[0] = False
    answer = await ask("and its revenue?")

    assert counter.runs == 4
    assert answer["messages"][-1].content == "answered"


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_a_hand_built_graphs_thread_is_counted_afresh_when_the_host_forgets_it(mode: str) -> None:
    """A status bot making the same search at each question of one thread: counted together,
    its 4th question's search is refused; forgotten before each question, none is."""
    counter, guard = Counter(), Guard.from_config(LIMITS)
    model = ScriptedChatModel(
        script=lambda n, m: (
            calls(("search", {"q": SECRET})) if isinstance(m[-1], HumanMessage) else AIMessage("ok")
        )
    )
    middleware = LoopfuseMiddleware(guard)
    node = ToolNode(
        [counter.tool()], wrap_tool_call=middleware.wrap_tool_call, awrap_tool_call=middleware.awrap_tool_call
    )
    graph = tool_node_graph(model, node, InMemorySaver())
    config: RunnableConfig = {**CONFIG, "configurable": {"thread_id": "status"}}
    for forget in (False, True):
        counter.runs = 0
        for question in range(6):
            given: Any = {"messages": [HumanMessage(f"is checkout up? ({question})")]}
            if mode == "sync":
                if forget:
                    middleware.forget_thread("status")
                graph.invoke(given, config)
            else:
                if forget:
                    await middleware.aforget_thread("status")
                await graph.ainvoke(given, config)
        assert counter.runs == (6 if forget else 3)
        guard.forget("thread:status")


async def test_langgraph_tool_node_async_wrapper() -> None:
    counter = Counter()
    model = ScriptedChatModel(script=forever("search", {"q": SECRET}))
    middleware = LoopfuseMiddleware(Guard.from_config(LIMITS), on_escalate="raise")
    node = ToolNode([counter.tool()], awrap_tool_call=middleware.awrap_tool_call)
    with pytest.raises(LoopAbortedError):
        await tool_node_graph(model, node).ainvoke({"messages": [HumanMessage("go")]}, CONFIG)
    assert counter.runs == 3


SYSTEM = SystemMessage("You are a research agent.")  # one object every run's input starts with


def test_tool_node_runs_sharing_a_system_prompt_object_keep_their_own_state() -> None:
    """A hand-built graph without a thread id: a run is named by its input's first message that
    is not a system prompt, so three runs with one prompt object and new questions stay apart."""
    counter, guard = Counter(), Guard.from_config(LIMITS)
    model = ScriptedChatModel(
        script=lambda n, m: calls(("search", {"q": SECRET})) if n % 3 < 2 else AIMessage("ok")
    )
    node = ToolNode([counter.tool()], wrap_tool_call=LoopfuseMiddleware(guard).wrap_tool_call)
    graph = tool_node_graph(model, node)
    for question in ("a", "b", "c"):
        graph.invoke({"messages": [SYSTEM, HumanMessage(question)]}, CONFIG)
    assert counter.runs == 6  # 2 searches a run; sharing one state, the 4th would be refused
    assert "error" not in [m.status for m in model.seen]
