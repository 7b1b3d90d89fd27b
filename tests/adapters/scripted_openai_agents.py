"""A scripted OpenAI Agents SDK model: no network, answers from a Python function."""

from __future__ import annotations

import itertools
import json
from collections.abc import AsyncIterator, Callable
from typing import Any

from agents import Model, ModelResponse, Usage
from agents.tracing import set_tracing_disabled
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

set_tracing_disabled(True)

Turn = list[Any]
Script = Callable[[int], Turn]
_ids = itertools.count()


def calls(*specs: tuple[str, dict[str, Any]]) -> Turn:
    """A model turn asking for the given function calls, in this order."""
    return [
        ResponseFunctionToolCall(
            type="function_call", name=name, arguments=json.dumps(args), call_id=f"c{n}", id=f"fc{n}"
        )
        for (name, args), n in zip(specs, _ids, strict=False)
    ]


def text(content: str) -> Turn:
    part = ResponseOutputText(type="output_text", text=content, annotations=[])
    return [
        ResponseOutputMessage(id="m", type="message", role="assistant", status="completed", content=[part])
    ]


def forever(name: str, args: dict[str, Any]) -> Script:
    return lambda n: calls((name, args))


def scripted(turns: list[Callable[[], Turn]]) -> Script:
    return lambda n: turns[n]() if n < len(turns) else text("done")


class ScriptedModel(Model):
    """Answers turn ``n`` with ``script(n)``; records the function outputs it was sent."""

    def __init__(self, script: Script) -> None:
        self.script = script
        self.turns = 0
        self.outputs: list[str] = []
        self._seen_ids: set[str] = set()

    async def get_response(
        self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any
    ) -> ModelResponse:
        self._collect(input)
        output = self.script(self.turns)
        self.turns += 1
        return ModelResponse(output=output, usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        raise NotImplementedError

    def _collect(self, items: Any) -> None:
        for item in items if isinstance(items, list) else []:
            data = item if isinstance(item, dict) else item.model_dump()
            if data.get("type") == "function_call_output" and data["call_id"] not in self._seen_ids:
                self._seen_ids.add(data["call_id"])
                self.outputs.append(str(data["output"]))
