"""Gemini CLI session logs.

``~/.gemini/tmp/<project_hash>/chats/session-*.json`` is one JSON document (so it is
read whole, up to ``MAX_DOCUMENT_BYTES``): ``{"sessionId", "projectHash", "startTime",
"lastUpdated", "messages": [{"type": "user"|"gemini"|..., "timestamp", "toolCalls":
[{"id", "name", "args", "result": [{"functionResponse": {...}}], "status",
"timestamp"}]}]}``. Since gemini-cli 0.3x (March 2026) a recording is ``session-*.jsonl``,
appended to: a first line of the session's metadata, then each message as a line of its own,
written again in full (same ``id``) whenever its tool calls, results or tokens change, and
``{"$set": {...}}`` (metadata; with ``messages``, the messages written again) and
``{"$rewindTo": id}`` lines. The latest copy of each message counts, in the order the messages
first came; a rewound turn's calls were made all the same, so they are kept. A sub-agent's
recording is ``chats/<parent sessionId>/<id>.jsonl``. Checkpoints saved with ``/chat save``
(``checkpoints/checkpoint-<tag>.json``) are a list of Gemini API contents:
``{"role": "model", "parts": [{"functionCall": {"name", "args"}}]}`` answered by
``{"role": "user", "parts": [{"functionResponse": {"name", "response"}}]}``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .base import MAX_DOCUMENT_BYTES, CallQueue, ReadTally, json_lines, load_document, parse_time
from .model import ToolCall

__all__ = ["read_gemini"]


def read_gemini(path: Path, tally: ReadTally) -> Iterator[ToolCall]:
    if path.suffix == ".jsonl":
        yield from _recording(path, tally)
        return
    doc = load_document(path, tally)
    if isinstance(doc, dict) and isinstance(doc.get("messages"), list):
        queue = CallQueue(str(doc.get("sessionId") or path.stem))
        yield from _session(doc["messages"], queue)
    elif isinstance(doc, list):
        queue = CallQueue(path.stem)
        yield from _checkpoint(doc, queue)
    elif doc is not None:
        tally.skip_malformed(path, "JSON, but neither a Gemini CLI session nor a checkpoint")
        return
    else:
        return
    yield from queue.drain()


def _session(messages: list[Any], queue: CallQueue) -> Iterator[ToolCall]:
    for message in messages:
        calls = message.get("toolCalls") if isinstance(message, dict) else None
        for call in calls if isinstance(calls, list) else ():
            if not isinstance(call, dict) or not isinstance(call.get("name"), str):
                continue
            time = parse_time(call.get("timestamp") or message.get("timestamp"))
            key = call.get("id") if isinstance(call.get("id"), str) else None
            yield from queue.add(key, "main", call["name"], call.get("args"), time)
            status = call.get("status")
            ok = None if status not in ("success", "error") else status == "success"
            yield from queue.resolve(key, _result(call), ok)


def _recording(path: Path, tally: ReadTally) -> Iterator[ToolCall]:
    """A JSON-lines recording: the latest copy of each message, in the order they first came
    (kept until the end, so bounded as a document is: a larger file is skipped)."""
    if path.stat().st_size > MAX_DOCUMENT_BYTES:
        tally.skip_too_large(path, MAX_DOCUMENT_BYTES)
        return
    run, messages = path.stem, dict[str, Any]()
    for row in json_lines(path, tally):
        patch = row.get("$set")
        if isinstance(row.get("id"), str):
            messages[row["id"]] = row
        elif isinstance(patch, dict):
            _kept(messages, patch.get("messages"))
        elif isinstance(row.get("sessionId"), str) and "$rewindTo" not in row:
            run = row["sessionId"]
            _kept(messages, row.get("messages"))
    queue = CallQueue(run)
    yield from _session(list(messages.values()), queue)
    yield from queue.drain()


def _kept(messages: dict[str, Any], written: Any) -> None:
    """Messages written again whole (a ``$set`` of them, or the metadata line's)."""
    for message in written if isinstance(written, list) else ():
        if isinstance(message, dict) and isinstance(message.get("id"), str):
            messages[message["id"]] = message


def _result(call: dict[str, Any]) -> Any:
    if call.get("error"):
        return call["error"]
    parts = call.get("result")
    for part in parts if isinstance(parts, list) else ():
        response = part.get("functionResponse") if isinstance(part, dict) else None
        if isinstance(response, dict):
            return response.get("response")
    return call.get("resultDisplay")


def _checkpoint(contents: list[Any], queue: CallQueue) -> Iterator[ToolCall]:
    waiting: dict[str, list[str]] = {}
    for content in contents:
        parts = content.get("parts") if isinstance(content, dict) else None
        for part in parts if isinstance(parts, list) else ():
            if not isinstance(part, dict):
                continue
            if isinstance(part.get("functionCall"), dict):
                yield from _checkpoint_call(part["functionCall"], queue, waiting)
            elif isinstance(part.get("functionResponse"), dict):
                yield from _checkpoint_response(part["functionResponse"], queue, waiting)


def _checkpoint_call(
    fc: dict[str, Any], queue: CallQueue, waiting: dict[str, list[str]]
) -> Iterator[ToolCall]:
    name = str(fc.get("name") or "unknown")
    key = str(fc.get("id") or f"{name}#{queue.count}")
    waiting.setdefault(name, []).append(key)
    yield from queue.add(key, "main", name, fc.get("args"), None)


def _checkpoint_response(
    fr: dict[str, Any], queue: CallQueue, waiting: dict[str, list[str]]
) -> Iterator[ToolCall]:
    name = str(fr.get("name") or "unknown")
    keys = waiting.get(name) or []
    key = fr.get("id") if isinstance(fr.get("id"), str) and fr["id"] in keys else (keys[0] if keys else None)
    if key is None:
        return
    keys.remove(key)
    response = fr.get("response")
    ok = False if isinstance(response, dict) and "error" in response else None
    yield from queue.resolve(key, response, ok)
