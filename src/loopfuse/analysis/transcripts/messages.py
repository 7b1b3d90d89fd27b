"""Chat messages: OpenAI chat-completions and Responses items, Anthropic Messages, as JSON or
JSON lines.

OpenAI: an ``assistant`` message with ``tool_calls: [{"id", "type": "function",
"function": {"name", "arguments"}}]`` (or the legacy ``function_call``), answered by
``{"role": "tool", "tool_call_id", "content"}`` (or ``{"role": "function", "name"}``); or, among
Responses API items (the OpenAI Agents SDK's ``result.to_input_list()``), a ``function_call``
item answered by a ``function_call_output`` with the same ``call_id``.
Anthropic: ``content`` blocks ``{"type": "tool_use", "id", "name", "input"}`` answered
by ``{"type": "tool_result", "tool_use_id", "content", "is_error"}``.

Accepted files: a JSON list of messages or ``{"messages": [...]}`` (one JSON document,
read whole up to ``MAX_DOCUMENT_BYTES``); JSON lines of messages (one run); JSON lines
of ``{"messages": [...]}`` conversations (one run per line).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from .base import CallQueue, ReadTally, json_lines, load_document, parse_arguments, parse_time
from .model import ToolCall

__all__ = ["looks_message", "read_messages_document", "read_messages_lines"]


def looks_message(row: dict[str, Any]) -> bool:
    return isinstance(row.get("role"), str) or isinstance(row.get("messages"), list)


def read_messages_document(path: Path, tally: ReadTally) -> Iterator[ToolCall]:
    doc = load_document(path, tally)
    if isinstance(doc, dict) and isinstance(doc.get("messages"), list):
        run = str(doc.get("id") or path.stem)
        yield from _conversation(doc["messages"], CallQueue(run))
    elif isinstance(doc, list):
        yield from _conversation(doc, CallQueue(path.stem))
    elif doc is not None:
        tally.skip_malformed(path, "JSON, but not a list of chat messages")


def read_messages_lines(path: Path, tally: ReadTally) -> Iterator[ToolCall]:
    single, legacy = CallQueue(path.stem), _Legacy()
    for number, row in enumerate(json_lines(path, tally), 1):
        if isinstance(row.get("messages"), list):
            yield from _conversation(
                row["messages"], CallQueue(str(row.get("id") or f"{path.stem}:{number}"))
            )
        else:
            yield from _message(row, single, legacy)
    yield from single.drain()


def _conversation(messages: Iterable[Any], queue: CallQueue) -> Iterator[ToolCall]:
    legacy = _Legacy()
    for message in messages:
        if isinstance(message, dict):
            yield from _message(message, queue, legacy)
    yield from queue.drain()


class _Legacy:
    """Legacy ``function_call`` / ``function`` messages carry no id: pair by order."""

    def __init__(self) -> None:
        self.pending: list[str] = []


def _message(message: dict[str, Any], queue: CallQueue, legacy: _Legacy) -> Iterator[ToolCall]:
    role = message.get("role")
    time = parse_time(message.get("timestamp") or message.get("created_at"))
    if message.get("type") in _RESPONSES_ITEMS:
        yield from _responses_item(message, queue, time)
        return
    agent = str(message.get("name") or "main") if role == "assistant" else "main"
    calls = message.get("tool_calls")
    for call in calls if isinstance(calls, list) else ():
        yield from _openai_call(call, queue, agent, time)
    if isinstance(message.get("function_call"), dict):
        key = f"legacy#{queue.count}"
        legacy.pending.append(key)
        yield from _openai_call({"id": key, "function": message["function_call"]}, queue, agent, time)
    if role == "tool":
        yield from queue.resolve(message.get("tool_call_id"), message.get("content"), None)
    elif role == "function" and legacy.pending:
        yield from queue.resolve(legacy.pending.pop(0), message.get("content"), None)
    content = message.get("content")
    if isinstance(content, list):
        yield from _anthropic_blocks(content, queue, agent, time)


_RESPONSES_ITEMS = frozenset({"function_call", "function_call_output"})


def _responses_item(item: dict[str, Any], queue: CallQueue, time: float | None) -> Iterator[ToolCall]:
    """A Responses API item: a ``function_call`` (``call_id``, ``name``, ``arguments``) or the
    ``function_call_output`` (``call_id``, ``output``) answering it."""
    if item["type"] == "function_call_output":
        yield from queue.resolve(item.get("call_id"), item.get("output"), None)
    elif isinstance(item.get("name"), str):
        yield from queue.add(
            item.get("call_id"), "main", item["name"], parse_arguments(item.get("arguments")), time
        )


def _openai_call(call: Any, queue: CallQueue, agent: str, time: float | None) -> Iterator[ToolCall]:
    function = call.get("function") if isinstance(call, dict) else None
    if not isinstance(function, dict) or not isinstance(function.get("name"), str):
        return
    args = parse_arguments(function.get("arguments"))
    yield from queue.add(call.get("id"), agent, function["name"], args, time)


def _anthropic_blocks(
    blocks: list[Any], queue: CallQueue, agent: str, time: float | None
) -> Iterator[ToolCall]:
    for block in blocks:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "tool_use" and isinstance(block.get("name"), str):
            yield from queue.add(block.get("id"), agent, block["name"], block.get("input"), time)
        elif block.get("type") == "tool_result":
            ok = not block["is_error"] if isinstance(block.get("is_error"), bool) else None
            yield from queue.resolve(block.get("tool_use_id"), block.get("content"), ok)
