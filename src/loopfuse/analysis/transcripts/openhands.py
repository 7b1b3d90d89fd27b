"""OpenHands event streams.

OpenHands 0.x stores one event per file (``~/.openhands/sessions/<id>/events/<n>.json``)
and exports trajectories as a JSON list of the same events. An action event is
``{"id", "timestamp", "source": "agent", "action": "run"|"read"|"edit"|..., "args":
{...}, "tool_call_metadata": {"function_name", ...}}``; its observation is ``{"id",
"cause": <action id>, "observation", "content", "extras": {"metadata": {"exit_code"}}}``.
The tool is the function the model called (``tool_call_metadata.function_name``) when
recorded, else the action. The 1.x SDK (``~/.openhands/conversations/<id>/events/``)
writes ``{"kind": "ActionEvent", "tool_name", "tool_call_id", "action": {...}}`` and
``{"kind": "ObservationEvent", "tool_call_id", "observation": {...}}``.
Accepted files: one event, a JSON list of events, JSON lines of events, or an events
folder (read file by file in numeric order).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from .base import CallQueue, ReadTally, json_lines, load_document, parse_time
from .model import ToolCall

__all__ = ["looks_openhands", "read_openhands_document", "read_openhands_events", "read_openhands_lines"]

_NOT_TOOLS = frozenset({"message", "system", "recall", "change_agent_state", "null", "condensation"})
_NOISE = ("thought", "confirmation_state", "security_risk", "hidden", "impl_source", "is_confirmed")


def looks_openhands(row: dict[str, Any]) -> bool:
    if row.get("kind") in ("ActionEvent", "ObservationEvent", "MessageEvent", "SystemPromptEvent"):
        return True
    return "source" in row and ("action" in row or "observation" in row)


def read_openhands_document(path: Path, tally: ReadTally) -> Iterator[ToolCall]:
    doc = load_document(path, tally)
    events = [doc] if isinstance(doc, dict) else doc
    if isinstance(events, list):
        yield from _stream(events, CallQueue(path.stem))
    elif doc is not None:
        tally.skip_malformed(path, "JSON, but not a list of OpenHands events")


def read_openhands_lines(path: Path, tally: ReadTally) -> Iterator[ToolCall]:
    yield from _stream(json_lines(path, tally), CallQueue(path.stem))


def read_openhands_events(folder: Path, tally: ReadTally) -> Iterator[ToolCall]:
    """An events folder: one small JSON file per event, in numeric order."""
    run = folder.parent.name if folder.name == "events" else folder.name
    yield from _stream(_event_files(folder, tally), CallQueue(run))


def event_files(folder: Path) -> list[Path]:
    files = [p for p in folder.iterdir() if p.suffix == ".json" and _number(p) is not None and p.is_file()]
    return sorted(files, key=lambda p: (_number(p) or 0, p.name))


def _number(path: Path) -> int | None:
    digits = path.stem.removeprefix("event-").split("-")[0]
    return int(digits) if digits.isdigit() else None


def _event_files(folder: Path, tally: ReadTally) -> Iterator[Any]:
    for file in event_files(folder):
        try:
            data = file.read_bytes()
            tally.read_bytes(len(data))
            yield json.loads(data.decode("utf-8-sig", errors="replace"))
        except json.JSONDecodeError as exc:
            tally.skip_malformed(file, f"not valid JSON at line {exc.lineno}: {exc.msg}")
        except OSError as exc:
            tally.skip_unreadable(file, exc)


def _stream(events: Iterable[Any], queue: CallQueue) -> Iterator[ToolCall]:
    for event in events:
        if isinstance(event, dict):
            yield from _event(event, queue)
    yield from queue.drain()


def _event(event: dict[str, Any], queue: CallQueue) -> Iterator[ToolCall]:
    kind = event.get("kind")
    time = parse_time(event.get("timestamp"))
    if kind == "ActionEvent" and isinstance(event.get("tool_name"), str):
        yield from queue.add(
            event.get("tool_call_id"), "main", event["tool_name"], _args(event.get("action")), time
        )
    elif kind in ("ObservationEvent", "AgentErrorEvent"):
        yield from queue.resolve(event.get("tool_call_id"), *_sdk_result(event))
    elif isinstance(event.get("action"), str) and event.get("source") == "agent":
        if event["action"] not in _NOT_TOOLS:
            yield from queue.add(str(event.get("id")), "main", _tool(event), _args(event.get("args")), time)
    elif "observation" in event and "cause" in event:
        yield from queue.resolve(str(event["cause"]), event.get("content"), _ok(event))


def _tool(event: dict[str, Any]) -> str:
    meta = event.get("tool_call_metadata")
    name = meta.get("function_name") if isinstance(meta, dict) else None
    return name if isinstance(name, str) and name else str(event["action"])


def _args(args: Any) -> Any:
    if not isinstance(args, dict):
        return args if args is not None else {}
    return {k: v for k, v in args.items() if k not in _NOISE and k != "kind"}


def _ok(event: dict[str, Any]) -> bool | None:
    if event.get("observation") == "error":
        return False
    extras = event.get("extras")
    meta = extras.get("metadata") if isinstance(extras, dict) else None
    code = meta.get("exit_code") if isinstance(meta, dict) else None
    if code is None and isinstance(extras, dict):
        code = extras.get("exit_code")
    return None if not isinstance(code, int) or code == -1 else code == 0


def _sdk_result(event: dict[str, Any]) -> tuple[Any, bool | None]:
    if event.get("kind") == "AgentErrorEvent":
        return event.get("error"), False
    observation = event.get("observation")
    if not isinstance(observation, dict):
        return observation, None
    error = observation.get("is_error")
    return observation.get("content", observation), (not error) if isinstance(error, bool) else None
