"""The Google ADK adapter, end to end: real ``LlmAgent`` and ``InMemoryRunner``, a scripted ``BaseLlm``."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from typing import Any

import pytest

pytest.importorskip("google.adk")

from google.adk.agents import BaseAgent, LlmAgent
from google.adk.apps import App
from google.adk.events import Event
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import InMemoryRunner
from google.genai import types

from loopfuse import Guard
from loopfuse.adapters.google_adk import LoopfusePlugin, loopfuse_callbacks

MAX_EVENTS = 200
Plan = list[types.Part | list[types.Part]]


def call(name: str = "probe", **args: Any) -> types.Part:
    return types.Part.from_function_call(name=name, args=args)


def say(text: str) -> types.Part:
    return types.Part(text=text)


class ScriptedLlm(BaseLlm):
    """Answers with the turns of ``plan`` in order (a part, or a list of parts for parallel
    calls), then repeats the last one forever."""

    model: str = "scripted"
    plan: Plan
    calls: int = 0

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        turn = self.plan[min(self.calls, len(self.plan) - 1)]
        self.calls += 1
        yield LlmResponse(
            content=types.Content(role="model", parts=turn if isinstance(turn, list) else [turn])
        )


class Probe:
    """A real function tool that counts how often its body ran."""

    def __init__(self) -> None:
        self.runs: list[tuple[str, str]] = []

    def tool(self, agent: str) -> Any:
        def probe(q: str) -> dict[str, Any]:
            """Look something up."""
            self.runs.append((agent, q))
            return {"result": "the same answer"}  # a looping call gets the same result

        return probe


async def run(agent: BaseAgent, plugins: list[Any]) -> list[Event]:
    runner = InMemoryRunner(app=App(name="loopfuse_test", root_agent=agent, plugins=plugins))
    session = await runner.session_service.create_session(app_name=runner.app_name, user_id="u")
    message = types.Content(role="user", parts=[say("go")])
    events: list[Event] = []

    async def collect() -> None:
        async for event in runner.run_async(user_id="u", session_id=session.id, new_message=message):
            events.append(event)
            assert len(events) < MAX_EVENTS, "the run did not stop"

    await asyncio.wait_for(collect(), 60)
    return events


def responses(events: list[Event]) -> list[dict[str, Any]]:
    return [
        dict(p.function_response.response or {})
        for e in events
        for p in (e.content.parts if e.content and e.content.parts else [])
        if p.function_response
    ]


def final_text(events: list[Event]) -> str | None:
    content = events[-1].content
    assert content is not None and content.parts
    return content.parts[0].text


def strict_guard() -> Guard:
    return Guard.from_config(
        {"circuit_breaker": {"duplicate_limit": 2, "result_limit": 2}, "guard": {"abort_after_denials": 3}}
    )


@pytest.mark.parametrize("hook", ["plugin", "agent_callbacks"])
async def test_a_looping_model_is_denied_then_the_invocation_ends(hook: str) -> None:
    probe, model, guard = Probe(), ScriptedLlm(plan=[call(q="weather in Paris")]), strict_guard()
    if hook == "plugin":
        agent, plugins = (
            LlmAgent(name="main", model=model, tools=[probe.tool("main")]),
            [LoopfusePlugin(guard)],
        )
    else:
        cb = loopfuse_callbacks(guard)
        agent = LlmAgent(
            name="main",
            model=model,
            tools=[probe.tool("main")],
            before_tool_callback=cb.before,
            after_tool_callback=cb.after,
        )
        plugins = []

    events = await run(agent, plugins)

    assert len(probe.runs) == 2
    seen = responses(events)
    assert [r.get("result") for r in seen[:2]] == ["the same answer"] * 2
    denials = seen[2:]
    assert len(denials) == 3
    assert all(d["error"].startswith("loopfuse refused this probe call") for d in denials)
    assert all("Paris" not in str(d) for d in denials)
    assert "stuck in a loop" in denials[-1]["loopfuse_stopped"]
    assert events[-1].actions.escalate and events[-1].is_final_response()
    assert model.calls == 5  # the model saw two denials, the third one ended the invocation


async def test_a_healthy_run_with_legitimate_repeats_is_untouched() -> None:
    probe, guard = Probe(), Guard()
    plan: Plan = [call(q="status"), call(q="deploy"), call(q="status"), call(q="status"), say("deployed")]
    agent = LlmAgent(name="main", model=ScriptedLlm(plan=plan), tools=[probe.tool("main")])

    events = await run(agent, [LoopfusePlugin(guard)])

    assert [q for _, q in probe.runs] == ["status", "deploy", "status", "status"]
    assert not any("error" in r for r in responses(events))
    assert final_text(events) == "deployed"
    assert guard.stats()["allowed"] == 4


@pytest.mark.parametrize(("share", "helper_runs"), [(False, 2), (True, 0)])
async def test_subagents_get_their_own_state_unless_shared(share: bool, helper_runs: int) -> None:
    probe = Probe()
    helper = LlmAgent(
        name="helper",
        description="helps",
        model=ScriptedLlm(plan=[call(q="same"), call(q="same"), say("helper done")]),
        tools=[probe.tool("helper")],
    )
    main_plan: Plan = [call(q="same"), call(q="same"), call("transfer_to_agent", agent_name="helper")]
    main = LlmAgent(
        name="main", model=ScriptedLlm(plan=main_plan), tools=[probe.tool("main")], sub_agents=[helper]
    )

    await run(main, [LoopfusePlugin(strict_guard(), share_subagents=share)])

    assert [a for a, _ in probe.runs] == ["main", "main"] + ["helper"] * helper_runs


async def test_parallel_identical_calls_in_one_turn_are_decided_in_model_order() -> None:
    probe = Probe()
    model = ScriptedLlm(plan=[[call(q="x")] * 4, say("done")])
    agent = LlmAgent(name="main", model=model, tools=[probe.tool("main")])

    events = await run(agent, [LoopfusePlugin(strict_guard())])

    assert len(probe.runs) == 4  # identical calls of one response (one round) count once
    assert ["error" in r for r in responses(events)] == [False] * 4
