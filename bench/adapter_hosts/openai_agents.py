"""OpenAI Agents SDK Runner with a scripted Model, with or without guard_agent."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from agents import Agent, Model, ModelResponse, RunConfig, Runner, Usage, function_tool
from agents.tracing import set_tracing_disabled
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

from loopfuse import Guard
from loopfuse.adapters.openai_agents import guard_agent

HOST = "openai-agents"
set_tracing_disabled(True)


class _Scripted(Model):
    def __init__(self, calls: int) -> None:
        self.calls, self.turn = calls, 0

    async def get_response(self, *args: Any, **kwargs: Any) -> ModelResponse:
        n, self.turn = self.turn, self.turn + 1
        if n >= self.calls:
            text = ResponseOutputText(type="output_text", text="done", annotations=[])
            output: list[Any] = [
                ResponseOutputMessage(
                    id="m", type="message", role="assistant", status="completed", content=[text]
                )
            ]
        else:
            arguments = json.dumps({"q": str(n)})
            output = [
                ResponseFunctionToolCall(
                    type="function_call", name="search", arguments=arguments, call_id=f"c{n}", id=f"fc{n}"
                )
            ]
        return ModelResponse(output=output, usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError


def search(q: str) -> str:
    """Search."""
    return f"result for {q}"


def run(guarded: bool, calls: int) -> None:
    agent = Agent(name="bench", model=_Scripted(calls), tools=[function_tool(search)])
    if guarded:
        guard_agent(agent, Guard.from_config({"circuit_breaker": {"max_calls_per_agent": 0}}))
    config = RunConfig(tracing_disabled=True)
    asyncio.run(Runner.run(agent, "go", max_turns=calls + 5, run_config=config))
