"""Which reader a file needs, decided by its content, and walking folders of sessions.

JSON-lines files are classified by their first parseable lines (the first line is read
whole up to 16 MiB: a session may open with a large paste); single JSON documents by the
keys in their first 64 KiB (and last 512 bytes, where mini-swe-agent writes its
``trajectory_format``). A folder named ``events`` holding numbered ``.json`` files is
one OpenHands session. Anything else, and anything not a regular file (a FIFO, a
device), is skipped and counted as unknown, never opened.
"""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .base import ReadTally
from .claude_code import looks_claude_code, read_claude_code
from .codex import looks_codex, read_codex
from .gemini import read_gemini
from .messages import looks_message, read_messages_document, read_messages_lines
from .model import ToolCall
from .normalized import read_normalized
from .openhands import (
    event_files,
    looks_openhands,
    read_openhands_document,
    read_openhands_events,
    read_openhands_lines,
)
from .swe_agent import read_mini_swe_agent, read_swe_agent

__all__ = [
    "DEFAULT_FOLDERS",
    "READERS",
    "Source",
    "default_folders",
    "identify",
    "read_path",
    "read_paths",
    "read_source",
    "sniff",
    "sources",
]

Reader = Callable[[Path, ReadTally], Iterator[ToolCall]]


def _normalized(path: Path, tally: ReadTally) -> Iterator[ToolCall]:
    return read_normalized(path, tally=tally)


READERS: dict[str, Reader] = {
    "claude-code": read_claude_code,
    "codex": read_codex,
    "gemini": read_gemini,
    "chat-json": read_messages_document,
    "chat-jsonl": read_messages_lines,
    "swe-agent": read_swe_agent,
    "mini-swe-agent": read_mini_swe_agent,
    "openhands-json": read_openhands_document,
    "openhands-jsonl": read_openhands_lines,
    "openhands-events": read_openhands_events,
    "normalized": _normalized,
}

# (format, folder relative to the home directory, environment variable overriding the base)
DEFAULT_FOLDERS: tuple[tuple[str, str, str | None], ...] = (
    ("claude-code", ".claude/projects", "CLAUDE_CONFIG_DIR"),
    ("codex", ".codex/sessions", "CODEX_HOME"),
    ("gemini", ".gemini/tmp", None),
    ("openhands", ".openhands/sessions", None),
    ("openhands", ".openhands/conversations", None),
    ("mini-swe-agent", ".config/mini-swe-agent", None),
    ("swe-agent", "trajectories", None),
)

EMPTY = "empty file"
NOT_A_FORMAT = "not a session format loopfuse reads"
NOT_JSON = f"{NOT_A_FORMAT} (not JSON)"
OTHER_JSON = f"{NOT_A_FORMAT} (JSON of another shape)"
NOT_A_FILE = "not a regular file"  # a FIFO, a socket, a device: opening it could block or never end
_HEAD_BYTES = 64 * 1024
_FIRST_LINE_BYTES = 16 * 1024 * 1024  # how far to read for a first line longer than the head
_TAIL_BYTES = 512
_SNIFF_LINES = 5


@dataclass(frozen=True)
class Source:
    """One recorded session to read: a file, or an OpenHands events folder."""

    path: Path
    format: str

    def read(self, tally: ReadTally) -> Iterator[ToolCall]:
        return READERS[self.format](self.path, tally)


def default_folders(home: Path | None = None) -> list[tuple[str, Path]]:
    """The agents' default session folders, existing or not (SWE-agent's is relative)."""
    base = home if home is not None else Path.home()
    found: list[tuple[str, Path]] = []
    for fmt, relative, env in DEFAULT_FOLDERS:
        root = Path(os.environ[env]) if env and os.environ.get(env) and home is None else base
        if env and root is not base:
            relative = relative.split("/", 1)[1]
        found.append((fmt, Path(relative) if fmt == "swe-agent" else root / relative))
    return found


def sniff(path: Path) -> str | None:
    """The format of ``path`` judged by its content, or None when it is not one we read."""
    return identify(path)[0]


def identify(path: Path) -> tuple[str | None, str]:
    """The format of ``path`` judged by its content, or None and why it is not one we read
    (the reason is empty when a format was found). Raises ``OSError`` when unreadable;
    a FIFO or device is not opened (it could block or never end)."""
    if not stat.S_ISREG(os.stat(path).st_mode):
        return None, NOT_A_FILE
    head, tail, size = _ends(path)
    text = head.decode("utf-8", errors="replace").lstrip("\ufeff \t\r\n")
    if not text:
        return None, EMPTY
    if text[0] not in "{[":
        return None, NOT_JSON
    found = _sniff(text, tail.decode("utf-8", errors="replace"), size <= len(head), path)
    return found, "" if found else OTHER_JSON


def _sniff(text: str, tail: str, complete: bool, path: Path) -> str | None:
    """The format, from the first lines, else the keys of the document, else (a first line
    longer than was read) the keys that line starts with; None for content no check
    expected (nested too deeply...): that is not a format we read."""
    try:
        return (
            _sniff_lines(text, complete)
            or _sniff_document(text[:_HEAD_BYTES], tail, path)
            or (_sniff_prefix(text[:_HEAD_BYTES]) if "\n" not in text else None)
        )
    except Exception:
        return None


def _ends(path: Path) -> tuple[bytes, bytes, int]:
    """The file's first ``_HEAD_BYTES`` (and on to the end of its first line, when none
    ends in them, up to ``_FIRST_LINE_BYTES``), its last ``_TAIL_BYTES`` beyond those, and
    its size."""
    with path.open("rb") as handle:
        head = handle.read(_HEAD_BYTES)
        if len(head) == _HEAD_BYTES and b"\n" not in head.lstrip(b"\xef\xbb\xbf \t\r\n"):
            head += handle.readline(_FIRST_LINE_BYTES)
        size = handle.seek(0, os.SEEK_END)
        tail = b""
        if size > len(head):
            handle.seek(max(size - _TAIL_BYTES, len(head)))
            tail = handle.read()
    return head, tail, size


def _sniff_lines(text: str, complete: bool) -> str | None:
    lines = text.split("\n")
    if not complete:
        lines = lines[:-1]
    for line in [line for line in lines if line.strip()][:_SNIFF_LINES]:
        try:
            row = json.loads(line)
        except (ValueError, RecursionError):
            return None
        found = _classify_row(row) if isinstance(row, dict) else _classify_list(row)
        if found is not None:
            return found
    return None


def _sniff_prefix(text: str) -> str | None:
    """A line too long to read whole (a session opening with a large paste), judged by
    the members it starts with."""
    row = _leading_members(text) if text.startswith("{") else {}
    return _classify_row(row) if row else None


_MEMBER_GAP = re.compile(r"[\s,]*")
_COLON = re.compile(r"\s*:\s*")
_EMPTY: dict[str, Callable[[], Any]] = {"[": list, "{": dict, '"': str}
_decode_at = json.JSONDecoder().raw_decode


def _leading_members(text: str) -> dict[str, Any]:
    """The members of the JSON object that ``text`` starts but does not finish; the value
    cut short is its kind's empty value (``[]``, ``{}``, ``""``), else None."""
    row: dict[str, Any] = {}
    at: int | None = 1
    while at is not None and (found := _name_at(text, at)) is not None:
        name, start = found
        row[name], at = _value_at(text, start)
    return row


def _name_at(text: str, at: int) -> tuple[str, int] | None:
    """The member name after ``at`` (and a comma) and where its value starts, or None."""
    gap = _MEMBER_GAP.match(text, at)
    try:
        name, end = _decode_at(text, gap.end() if gap else at)
    except ValueError:
        return None
    colon = _COLON.match(text, end)
    return (name, colon.end()) if isinstance(name, str) and colon else None


def _value_at(text: str, at: int) -> tuple[Any, int | None]:
    """The value at ``at`` and where it ends; one cut short is its kind's empty value and None."""
    try:
        value, end = _decode_at(text, at)
    except ValueError:
        return _EMPTY.get(text[at : at + 1], lambda: None)(), None
    return value, end


def _classify_row(row: dict[str, Any]) -> str | None:
    if "meta" in row or ("tool" in row and "args" in row):
        return "normalized"
    if isinstance(row.get("trajectory"), list):
        return "swe-agent"
    if isinstance(row.get("messages"), list) and ("trajectory_format" in row or "info" in row):
        return "mini-swe-agent"
    if isinstance(row.get("messages"), list) and "sessionId" in row:
        return "gemini"
    if "sessionId" in row and "projectHash" in row:  # a JSON-lines recording's first line
        return "gemini"
    checks: tuple[tuple[Callable[[dict[str, Any]], bool], str], ...] = (
        (looks_claude_code, "claude-code"),
        (looks_codex, "codex"),
        (looks_openhands, "openhands-jsonl"),
        (looks_message, "chat-jsonl"),
    )
    return next((fmt for check, fmt in checks if check(row)), None)


def _classify_list(value: Any) -> str | None:
    if not isinstance(value, list) or not value or not isinstance(value[0], dict):
        return None
    first = value[0]
    if "parts" in first and "role" in first:  # (Pydantic AI's messages have parts, no role)
        return "gemini"
    if looks_openhands(first):
        return "openhands-json"
    return "chat-json" if "role" in first else None


_KEY = r'"{}"\s*:'


def _has(text: str, *keys: str) -> bool:
    return all(re.search(_KEY.format(re.escape(k)), text) for k in keys)


def _sniff_document(head: str, tail: str, path: Path) -> str | None:
    if head[0] == "[":
        if _has(head, "parts") and _has(head, "role"):
            return "gemini"
        if (
            _has(head, "source") and (_has(head, "action") or _has(head, "observation"))
        ) or '"ActionEvent"' in head:
            return "openhands-json"
        return "chat-json" if _has(head, "role") else None
    if _has(head + tail, "trajectory_format") or _has(head, "mini_version"):
        return "mini-swe-agent"
    if _has(head, "trajectory") or path.suffix == ".traj":
        return "swe-agent"
    if _has(head, "sessionId", "messages") or _has(head, "projectHash"):
        return "gemini"
    return "chat-json" if _has(head, "messages") else None


def sources(paths: Iterable[Path], tally: ReadTally) -> Iterator[Source]:
    """Every readable session under ``paths`` (files or folders), in a stable order."""
    for path in paths:
        if path.is_dir():
            yield from _walk(path, tally)
        else:
            found = _source(path, tally)
            if found is not None:
                yield found


def _walk(root: Path, tally: ReadTally) -> Iterator[Source]:
    def unreadable(error: OSError) -> None:
        tally.skip_unreadable(Path(error.filename or root), error)

    for folder, dirs, files in os.walk(root, onerror=unreadable):
        dirs.sort()
        here = Path(folder)
        if here.name == "events" and event_files(here):
            dirs.clear()
            tally.formats["openhands-events"] += 1
            yield Source(here, "openhands-events")
            continue
        for name in sorted(files):
            found = _source(here / name, tally)
            if found is not None:
                yield found


def _source(path: Path, tally: ReadTally) -> Source | None:
    try:
        fmt, why_not = identify(path)
    except OSError as exc:
        tally.skip_unreadable(path, exc)
        return None
    if fmt is None:
        tally.skip_unknown(path, why_not)
        return None
    tally.formats[fmt] += 1
    return Source(path, fmt)


def read_path(path: str | Path, tally: ReadTally | None = None) -> Iterator[ToolCall]:
    """Every tool call recorded under ``path`` (a file or a folder, any supported format)."""
    yield from read_paths([Path(path)], tally)


def read_paths(paths: Iterable[Path], tally: ReadTally | None = None) -> Iterator[ToolCall]:
    counts = tally if tally is not None else ReadTally()
    for source in sources(paths, counts):
        yield from read_source(source, counts)


def read_source(source: Source, tally: ReadTally) -> Iterator[ToolCall]:
    """The source's calls; a file that cannot be read or decoded is counted in ``tally``, never raised."""
    try:
        yield from source.read(tally)
    except OSError as exc:
        tally.skip_unreadable(source.path, exc)
    except RecursionError:
        tally.skip_malformed(source.path, "nested too deeply to read")
    except UnicodeError:
        tally.skip_malformed(source.path, "not UTF-8 text")
    except Exception as exc:  # content no reader expected: this file is skipped, the others read
        tally.skip_damaged(source.path, exc)
