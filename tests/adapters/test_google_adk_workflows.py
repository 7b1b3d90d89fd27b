"""Google ADK workflows: a stop ends the whole invocation, not only the agent that looped."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("google.adk")

from google.adk.agents import LlmAgent, SequentialAgent

from loopfuse.adapters.google_adk import LoopfusePlugin

from .test_google_adk import Probe, ScriptedLlm, call, run, say, strict_guard


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
