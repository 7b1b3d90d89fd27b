"""LangChain v1: tools that use LangGraph's control flow are judged as any other. A tool that
pauses the run for a human (``interrupt``): its pause is no failure, and its re-run on resume is
not a second call. A tool that answers with a ``Command``: by the message it answers with."""

from __future__ import annotations

import itertools
from typing import Annotated, Any

import pytest

pytest.importorskip("langchain")

from langchain.agents import create_agent
from langchain_core.messages import HumanMessage, ToolMessage
from langchain_core.tools import BaseTool, InjectedToolCallId, tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command, interrupt

from loopfuse import Guard
from loopfuse.adapters.langchain import LoopfuseMiddleware

from .scripted_langchain import ScriptedChatModel, calls, scripted

ANSWERS = (f"the human's answer number {n}" for n in itertools.count())


@tool
def ask_human(question: str) -> str:
    """Ask the user, pausing the run until they answer."""
    return str(interrupt(question))


@tool
def ask_by_mail(question: str) -> str:
    """Ask the user by mail: the answer comes back at once."""
    return next(ANSWERS)


async def asked(question_tool: BaseTool, run: str) -> tuple[list[ToolMessage], int, Guard]:
    """The model asks the same question 12 times, the human answering something new each time;
    ``run``: ``invoke`` or ``ainvoke``."""
    guard = Guard()
    turns = [calls((question_tool.name, {"question": "which city?"})) for _ in range(12)]
    model = ScriptedChatModel(script=scripted(turns))
    agent = create_agent(
        model, [question_tool], middleware=[LoopfuseMiddleware(guard)], checkpointer=InMemorySaver()
    )
    config: Any = {"configurable": {"thread_id": "t"}}

    async def invoke(given: Any) -> Any:
        return await agent.ainvoke(given, config) if run == "ainvoke" else agent.invoke(given, config)

    out = await invoke({"messages": [HumanMessage("go")]})
    pauses = 0
    while "__interrupt__" in out:
        pauses += 1
        out = await invoke(Command(resume=next(ANSWERS)))
    return [m for m in out["messages"] if isinstance(m, ToolMessage)], pauses, guard


@pytest.mark.parametrize("run", ["invoke", "ainvoke"])
async def test_a_question_the_human_answers_anew_each_time_is_judged_as_one_answered_at_once(
    run: str,
) -> None:
    by_mail, _, mail_guard = await asked(ask_by_mail, run)
    paused, pauses, guard = await asked(ask_human, run)

    assert [m.status for m in paused] == [m.status for m in by_mail]
    assert pauses == sum(m.status != "error" for m in paused)
    assert guard.stats()["checks"] == mail_guard.stats()["checks"]  # a resumed call is not checked again
    assert all("failed" not in str(m.content) for m in paused)


PAGES = itertools.count(1)


@tool
def next_page(cursor: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> Command[Any]:
    """Read the next page of rows, answering with a state update (a ``Command``)."""
    return Command(
        update={"messages": [ToolMessage(f"page {next(PAGES)} of rows", tool_call_id=tool_call_id)]}
    )


@tool
def read_page(cursor: str) -> str:
    """Read the next page of rows."""
    return f"page {next(PAGES)} of rows"


@pytest.mark.parametrize("run", ["invoke", "ainvoke"])
async def test_a_tool_answering_with_a_command_is_judged_by_the_message_it_answers_with(run: str) -> None:
    """Each page is new: a tool that answers with a ``Command`` is judged as one answering with
    the same text (not as a call that returned nothing, the same "result" each time)."""
    denials = []
    for page_tool in (read_page, next_page):
        model = ScriptedChatModel(
            script=scripted([calls((page_tool.name, {"cursor": "c"})) for _ in range(12)])
        )
        agent = create_agent(model, [page_tool], middleware=[LoopfuseMiddleware(Guard())])
        given: Any = {"messages": [HumanMessage("go")]}
        out = await agent.ainvoke(given) if run == "ainvoke" else agent.invoke(given)
        refused = [m for m in out["messages"] if isinstance(m, ToolMessage) and m.status == "error"]
        denials.append([str(m.content).replace(page_tool.name, "<tool>") for m in refused])

    assert denials[1] == denials[0]
    assert denials[0] and "returned the same result" not in denials[0][0]
