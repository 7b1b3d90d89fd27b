"""Google ADK workflows: a stop ends the whole invocation, not only the agent that looped; a
paused invocation resumed later is the same invocation."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("google.adk")

from google.adk.agents import LlmAgent, SequentialAgent
from google.adk.apps import App
from google.adk.runners import InMemoryRunner
from google.adk.tools.agent_tool import AgentTool
from google.adk.tools.long_running_tool import LongRunningFunctionTool
from google.genai import types

from loopfuse import Guard
from loopfuse.adapters.google_adk import LoopfusePlugin

from .test_google_adk import Plan, Probe, ScriptedLlm, call, responses, run, say, strict_guard


def publisher(published: list[str]) -> LlmAgent:
    def publish(text: str) -> dict[str, Any]:
        """Publish a report."""
        published.append(text)
        return {"result": "published"}

    model = ScriptedLlm(plan=[call("publish", text="report"), say("published")])
    return LlmAgent(name="publisher", model=model, tools=[publish])


@pytest.mark.filterwarnings("ignore:SequentialAgent is deprecated:DeprecationWarning")
async def test_a_stop_ends_the_agents_after_the_looping_one() -> None:
    probe, published = Probe(), list[str]()
    looper = LlmAgent(name="looper", model=ScriptedLlm(plan=[call(q="x")]), tools=[probe.tool("looper")])
    nxt = publisher(published)

    events = await run(
        SequentialAgent(name="pipeline", sub_agents=[looper, nxt]), [LoopfusePlugin(strict_guard())]
    )

    assert len(probe.runs) == 2
    assert published == []  # the next step never ran, nor did its model
    assert isinstance(nxt.model, ScriptedLlm) and nxt.model.calls == 0
    assert events[-1].author == "publisher" and "stuck in a loop" in str(events[-1].content)


async def test_an_invocation_paused_for_a_long_running_tool_keeps_its_counts() -> None:
    """Each cycle the same look-up, then a question a person answers later: ADK's ``run_async``
    returns at each pause and resumes the same invocation with the answer. The look-ups are
    refused as in one run that asks an ordinary tool, and the state goes at the end."""
    at_once, at_once_guard = await cycles(long_running=False)
    paused, guard = await cycles(long_running=True)

    assert at_once_guard.stats()["denied"] > 0
    assert (len(paused.runs), guard.stats()["denied"]) == (len(at_once.runs), at_once_guard.stats()["denied"])
    assert guard.stats()["agents"] == 0


async def cycles(*, long_running: bool) -> tuple[Probe, Guard]:
    """8 cycles of the same look-up and a question, each pause answered "yes"."""

    def ask_human(question: str) -> dict[str, str] | None:
        """Ask a person."""
        return None if long_running else {"answer": "yes"}

    probe, guard = Probe(), Guard()
    plan: Plan = [*[call(q="x"), call("ask_human", question="ok?")] * 8, say("done")]
    tools: list[Any] = [probe.tool("main"), LongRunningFunctionTool(ask_human) if long_running else ask_human]
    agent = LlmAgent(name="main", model=ScriptedLlm(plan=plan), tools=tools)
    runner = InMemoryRunner(app=App(name="loopfuse_test", root_agent=agent, plugins=[LoopfusePlugin(guard)]))
    session = await runner.session_service.create_session(app_name=runner.app_name, user_id="u")
    message = types.Content(role="user", parts=[say("go")])
    for _ in range(9):
        events = [e async for e in runner.run_async(user_id="u", session_id=session.id, new_message=message)]
        asked = [c for c in events[-1].get_function_calls() if c.name == "ask_human"]
        if not asked:
            break
        answer = types.FunctionResponse(id=asked[-1].id, name="ask_human", response={"answer": "yes"})
        message = types.Content(role="user", parts=[types.Part(function_response=answer)])
    return probe, guard


@pytest.mark.filterwarnings(
    "ignore:The `plugins` argument is deprecated:DeprecationWarning"
)  # ADK's AgentTool
async def test_an_agent_tool_whose_agent_was_stopped_answers_with_the_stop() -> None:
    """An agent used as a tool (``AgentTool``) that loops is stopped inside; the agent that called
    it is told so, as a failed call, instead of getting an empty answer as a success."""
    probe = Probe()
    researcher = LlmAgent(
        name="researcher",
        description="researches",
        model=ScriptedLlm(plan=[call(q="x")]),
        tools=[probe.tool("researcher")],
    )
    boss_model = ScriptedLlm(plan=[call("researcher", request="find acme revenue"), say("done")])
    boss = LlmAgent(name="boss", model=boss_model, tools=[AgentTool(agent=researcher)])

    events = await run(boss, [LoopfusePlugin(Guard())])

    answers = [r for r in responses(events) if "result" in r or "error" in r][-1:]
    assert answers and "stuck in a loop" in str(answers[0].get("error"))
