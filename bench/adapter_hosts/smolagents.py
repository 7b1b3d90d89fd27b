"""smolagents: a ToolCallingAgent with a scripted model making one distinct tool call a step."""

from __future__ import annotations

import itertools
from typing import Any

from smolagents import Model, Tool, ToolCallingAgent  # type: ignore[import-untyped]
from smolagents.models import (  # type: ignore[import-untyped]
    ChatMessage,
    ChatMessageToolCall,
    ChatMessageToolCallFunction,
    MessageRole,
)

from loopfuse import Guard
from loopfuse.adapters.smolagents import guard_agent

HOST = "smolagents"
_ids = itertools.count()


class _Scripted(Model):  # type: ignore[misc]  # Model is Any: smolagents is untyped
    def __init__(self, calls: int) -> None:
        super().__init__(model_id="scripted")
        self.step, self.calls = 0, calls

    def generate(self, messages: list[Any], stop_sequences: Any = None, **kwargs: Any) -> ChatMessage:
        self.step += 1
        name, args = (
            ("probe", {"q": f"item {self.step}"})
            if self.step <= self.calls
            else ("final_answer", {"answer": "done"})
        )
        function = ChatMessageToolCallFunction(name=name, arguments=args)
        call = ChatMessageToolCall(id=f"c{next(_ids)}", type="function", function=function)
        return ChatMessage(role=MessageRole.ASSISTANT, content="", tool_calls=[call])


class _Probe(Tool):  # type: ignore[misc]  # Tool is Any: smolagents is untyped
    name = "probe"
    description = "Look something up."
    inputs = {"q": {"type": "string", "description": "what to look up"}}  # noqa: RUF012
    output_type = "string"

    def forward(self, q: str) -> str:
        return f"result for {q}"


def run(guarded: bool, calls: int) -> None:
    agent = ToolCallingAgent(
        tools=[_Probe()], model=_Scripted(calls), max_steps=calls + 1, verbosity_level=-1
    )
    if guarded:
        guard_agent(agent, Guard.from_config({"circuit_breaker": {"max_calls_per_agent": 0}}))
    assert agent.run("go") == "done"
