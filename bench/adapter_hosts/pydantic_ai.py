"""Pydantic AI Agent with a FunctionModel, with or without LoopfuseCapability."""

from __future__ import annotations

from typing import Any

from pydantic_ai import Agent
from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import FunctionModel
from pydantic_ai.usage import UsageLimits

from loopfuse import Guard
from loopfuse.adapters.pydantic_ai import LoopfuseCapability

HOST = "pydantic-ai"


def _scripted(calls: int) -> FunctionModel:
    turns = iter(range(calls + 1))

    def respond(messages: Any, info: Any) -> ModelResponse:
        n = next(turns)
        if n >= calls:
            return ModelResponse(parts=[TextPart("done")])
        return ModelResponse(parts=[ToolCallPart("search", {"q": str(n)}, tool_call_id=f"c{n}")])

    return FunctionModel(respond)


def search(q: str) -> str:
    """Search."""
    return f"result for {q}"


def run(guarded: bool, calls: int) -> None:
    guard = Guard.from_config({"circuit_breaker": {"max_calls_per_agent": 0}})
    capabilities = [LoopfuseCapability(guard)] if guarded else []
    agent = Agent(_scripted(calls), capabilities=capabilities, tools=[search])
    agent.run_sync("go", usage_limits=UsageLimits(request_limit=calls + 5))
