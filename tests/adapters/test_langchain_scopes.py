"""LangChain v1: a run's guard state goes when the run ends; a thread's stays for its next turn."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain.agents.middleware.types import InputAgentState
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph

from loopfuse import Guard
from loopfuse.adapters.langchain import LoopfuseMiddleware

from .scripted_langchain import ScriptedChatModel, calls, scripted
from .test_langchain import CONFIG, LIMITS, SECRET, Counter, loop_agent

GO: InputAgentState = {"messages": [HumanMessage("go")]}


def test_a_run_without_thread_leaves_no_state_behind() -> None:
    counter, guard = Counter(), Guard.from_config(LIMITS)
    model = ScriptedChatModel(script=scripted([calls(("search", {"q": "a"})), calls(("search", {"q": "b"}))]))
    agent = create_agent(model, [counter.tool()], middleware=[LoopfuseMiddleware(guard)])

    assert agent.invoke(GO, CONFIG)["messages"][-1].content == "done"
    assert counter.runs == 2
    assert guard.stats()["agents"] == 0


async def test_a_run_stopped_for_looping_leaves_no_state_behind() -> None:
    guard = Guard.from_config(LIMITS)
    agent, _ = loop_agent(guard, Counter())

    result = await agent.ainvoke(GO, CONFIG)

    assert "Run stopped by loopfuse" in result["messages"][-1].content
    assert guard.stats()["agents"] == 0


def twice_in_a_thread(guard: Guard, *, as_node: bool = False, **options: Any) -> Counter:
    """Two invocations of one thread, each searching the same thing twice; ``as_node``: the agent
    is a node of a parent graph, which has the thread's checkpointer."""
    counter = Counter()
    model = ScriptedChatModel(
        script=lambda n, m: calls(("search", {"q": SECRET})) if n % 3 < 2 else AIMessage(content="ok")
    )
    agent: Any = create_agent(
        model,
        [counter.tool()],
        middleware=[LoopfuseMiddleware(guard, **options)],
        checkpointer=None if as_node else InMemorySaver(),
    )
    if as_node:
        parent = StateGraph(MessagesState)
        parent.add_node("assistant", agent)
        parent.add_edge(START, "assistant")
        agent = parent.compile(checkpointer=InMemorySaver())
    thread: RunnableConfig = {**CONFIG, "configurable": {"thread_id": "t"}}
    agent.invoke(GO, thread)
    agent.invoke({"messages": [HumanMessage("again")]}, thread)
    return counter


def test_each_invocation_of_a_thread_is_a_run_of_its_own() -> None:
    guard = Guard.from_config(LIMITS)
    assert twice_in_a_thread(guard).runs == 4  # sharing one state, the 4th search would be refused
    assert guard.stats()["agents"] == 0  # each run's state went when it ended


@pytest.mark.parametrize("as_node", [False, True])
def test_a_shared_thread_keeps_its_state_for_the_next_invocation(as_node: bool) -> None:
    guard = Guard.from_config(LIMITS)
    assert twice_in_a_thread(guard, as_node=as_node, share_thread=True).runs == 3  # 2 + 1, then denied
    assert guard.stats()["agents"] == 1


def test_a_long_conversation_never_reaches_the_call_cap() -> None:
    """The cap is a budget per task: questions of 5 new look-ups each, in one thread, run on
    past a cap of 8."""
    counter, guard = Counter(), Guard.from_config({"cap": {"limit": 8}})
    model = ScriptedChatModel(
        script=lambda n, m: calls(("search", {"q": f"item {n}"})) if n % 6 < 5 else AIMessage(content="ok")
    )
    agent = create_agent(
        model, [counter.tool()], middleware=[LoopfuseMiddleware(guard)], checkpointer=InMemorySaver()
    )
    thread: RunnableConfig = {**CONFIG, "configurable": {"thread_id": "customer-42"}}
    for question in range(3):
        assert (
            agent.invoke({"messages": [HumanMessage(f"question {question}")]}, thread)["messages"][-1].content
            == "ok"
        )
    assert counter.runs == 15


def test_a_sub_agent_run_ending_inside_a_tool_keeps_the_outer_run_state() -> None:
    counter, guard = Counter(), Guard.from_config(LIMITS)
    inner, _ = loop_agent(guard, counter)

    @tool
    def delegate(task: str) -> str:
        """Hand the task to a sub-agent."""
        inner.invoke({"messages": [HumanMessage(task)]}, CONFIG)
        return "3 results"  # nothing new, as the searches: a new answer would excuse their re-runs

    searches = [calls(("search", {"q": SECRET})) for _ in range(4)]
    turns = [*searches[:2], calls(("delegate", {"task": "x"})), *searches[2:]]
    outer = create_agent(
        ScriptedChatModel(script=scripted(turns)),
        [counter.tool(), delegate],
        middleware=[LoopfuseMiddleware(guard)],
    )

    assert outer.invoke(GO, CONFIG)["messages"][-1].content == "done"
    assert counter.runs == 3 + 3  # outer: the 4th search was denied; inner: stopped after 3
    assert guard.stats()["agents"] == 0


PROMPT = SystemMessage("You are a research agent.")  # one object every request reuses


def allowed_and_denied(result: dict[str, object]) -> tuple[int, int]:
    tools = [m for m in result["messages"] if isinstance(m, ToolMessage)]  # type: ignore[attr-defined]
    return sum(m.status != "error" for m in tools), sum(m.status == "error" for m in tools)


async def test_concurrent_runs_reusing_one_prompt_object_keep_their_own_state() -> None:
    """LangGraph gives the reused message an id in place: the runs must not be named by it."""
    guard = Guard.from_config(LIMITS)
    counter = Counter()
    agent, _ = loop_agent(guard, counter)
    requests: list[InputAgentState] = [{"messages": [PROMPT, HumanMessage(q)]} for q in ("a", "b")]
    results = await asyncio.gather(*(agent.ainvoke(r, CONFIG) for r in requests))
    assert [allowed_and_denied(r) for r in results] == [(3, 4), (3, 4)]
    again = await agent.ainvoke({"messages": [PROMPT, HumanMessage("c")]}, CONFIG)
    assert allowed_and_denied(again) == (3, 4)  # a later run starts afresh too
    assert guard.stats()["agents"] == 0
