"""Codex CLI rollout JSON lines (``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``).

Current versions write ``{"timestamp", "type", "payload"}`` lines: ``session_meta``
(``payload.id`` names the run), ``response_item`` whose payload is a
``function_call`` (``name``, ``arguments`` as a JSON string, ``call_id``),
``custom_tool_call`` (``name``, ``input``), ``local_shell_call`` (``action``) or the
matching ``*_output`` (``call_id``, ``output``), or a ``web_search_call`` (``action``: the
search, no id and no output: a call that reports nothing). A command's output may open with
an envelope (``Chunk ID``, ``Wall time``, ``Process exited with code N``, ``Original token
count``, then ``Output:``), which is read for the exit code and left out of the result: its
chunk id and time are new on every run. Versions before September 2025 wrote
the response items themselves, one a line, after a ``{"id", "timestamp",
"instructions"}`` line. Lines mentioning no call and no session are not parsed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .base import CallQueue, ReadTally, json_lines, parse_arguments, parse_time
from .model import ToolCall

__all__ = ["looks_codex", "read_codex"]

_LINE_TYPES = frozenset({"session_meta", "response_item", "event_msg", "turn_context", "compacted"})
_CALLS = frozenset({"function_call", "custom_tool_call", "local_shell_call"})
_OUTPUTS = frozenset({"function_call_output", "custom_tool_call_output", "local_shell_call_output"})
_WANTED = ("_call", "session_meta", '"instructions"')
_EXIT_CODE = re.compile(r"^Exit code: (-?\d+)")
# The envelope of a command's output (unified exec, apply_patch), up to "Output:".
_ENVELOPE = re.compile(
    r"(?:Command: [^\n]*\n)?(?:Chunk ID: [^\n]*\n)?(?:Wall time:? [^\n]*\n)?"
    r"(?:(?:Process exited with code|Exit code:?) (-?\d+)\n)?(?:Process running with session ID [^\n]*\n)?"
    r"(?:Wall time:? [^\n]*\n)?(?:Total output lines: \d+\n)?(?:Original token count: \d+\n)?Output:\n"
)


def looks_codex(row: dict[str, Any]) -> bool:
    if isinstance(row.get("type"), str) and row["type"] in _LINE_TYPES and "payload" in row:
        return True
    legacy_header = "instructions" in row and "id" in row and "timestamp" in row
    return legacy_header or row.get("record_type") == "state"


def read_codex(path: Path, tally: ReadTally) -> Iterator[ToolCall]:
    queue = CallQueue(path.stem)
    for row in json_lines(path, tally, _WANTED):
        item = _item(row)
        kind = item.get("type") if isinstance(item.get("type"), str) else None
        if kind == "session_meta" and isinstance(item.get("id"), str):
            queue.run = item["id"]
        elif kind in _CALLS:
            time = parse_time(row.get("timestamp"))
            yield from queue.add(item.get("call_id"), "main", *_call(item), time)
        elif kind in _OUTPUTS:
            yield from queue.resolve(item.get("call_id"), *_output(item.get("output")))
        elif kind == "web_search_call":
            time = parse_time(row.get("timestamp"))
            yield from queue.add_done("main", "web_search", item.get("action"), time)
    yield from queue.drain()


def _item(row: dict[str, Any]) -> dict[str, Any]:
    payload = row.get("payload")
    if isinstance(payload, dict):
        return {**payload, "type": "session_meta"} if row.get("type") == "session_meta" else payload
    if "instructions" in row and isinstance(row.get("id"), str):
        return {"type": "session_meta", "id": row["id"]}
    return row


def _call(item: dict[str, Any]) -> tuple[str, Any]:
    kind = item["type"]
    if kind == "local_shell_call":
        return "local_shell", item.get("action")
    name = str(item.get("name") or kind)
    if kind == "custom_tool_call":
        return name, {"input": item.get("input")}
    return name, parse_arguments(item.get("arguments"))


def _output(output: Any) -> tuple[Any, bool | None]:
    """The result text and whether it succeeded, from the shapes Codex has written."""
    if isinstance(output, dict):
        ok = output.get("success")
        return output.get("content", output), ok if isinstance(ok, bool) else None
    if not isinstance(output, str):
        return output, None
    try:
        decoded = json.loads(output) if output.startswith("{") else None
    except ValueError:
        decoded = None
    if isinstance(decoded, dict) and "output" in decoded:
        meta = decoded.get("metadata")
        code = meta.get("exit_code") if isinstance(meta, dict) else None
        return decoded["output"], (code == 0) if isinstance(code, int) else None
    envelope = _ENVELOPE.match(output)
    if envelope is not None and envelope.end() > len("Output:\n"):
        code = envelope.group(1)
        return output[envelope.end() :], (code == "0") if code is not None else None
    found = _EXIT_CODE.match(output)
    return output, (found.group(1) == "0") if found else None
