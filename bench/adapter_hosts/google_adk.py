"""Google ADK: an LlmAgent in an InMemoryRunner, a scripted BaseLlm making one distinct call a turn."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from typing import Any

from google.adk.agents import LlmAgent
from google.adk.apps import App
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.plugins.base_plugin import BasePlugin
from google.adk.runners import InMemoryRunner
from google.genai import types

from loopfuse import Guard
from loopfuse.adapters.google_adk import LoopfusePlugin

HOST = "google-adk"


class _Scripted(BaseLlm):
    model: str = "scripted"
    calls: int
    step: int = 0

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        self.step += 1
        if self.step <= self.calls:
            part = types.Part.from_function_call(name="probe", args={"q": f"item {self.step}"})
        else:
            part = types.Part(text="done")
        usage = types.GenerateContentResponseUsageMetadata(
            prompt_token_count=1, candidates_token_count=1, total_token_count=2
        )
        yield LlmResponse(content=types.Content(role="model", parts=[part]), usage_metadata=usage)


def probe(q: str) -> dict[str, Any]:
    """Look something up."""
    return {"result": f"weather for {q}"}


async def _run(guarded: bool, calls: int) -> None:
    agent = LlmAgent(name="main", model=_Scripted(calls=calls), tools=[probe])
    guard = Guard.from_config({"circuit_breaker": {"max_calls_per_agent": 0}})
    # annotated: App takes list[BasePlugin], and list is invariant (list[LoopfusePlugin] would not do)
    plugins: list[BasePlugin] = [LoopfusePlugin(guard)] if guarded else []
    runner = InMemoryRunner(app=App(name="bench", root_agent=agent, plugins=plugins))
    session = await runner.session_service.create_session(app_name=runner.app_name, user_id="u")
    message = types.Content(role="user", parts=[types.Part(text="go")])
    async for _ in runner.run_async(user_id="u", session_id=session.id, new_message=message):
        pass


def run(guarded: bool, calls: int) -> None:
    asyncio.run(_run(guarded, calls))
