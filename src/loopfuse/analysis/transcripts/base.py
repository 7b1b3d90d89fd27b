"""What the readers share: counting what was skipped, JSON lines, bounded documents,
excerpts, timestamps, and pairing each tool call with its later result."""

from __future__ import annotations

import codecs
import json
import os
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any, BinaryIO

from .model import ToolCall
from .tally import ReadTally

__all__ = [
    "EXCERPT_CHARS",
    "MAX_DOCUMENT_BYTES",
    "REPORT_BYTES",
    "RESULT_CHARS",
    "CallQueue",
    "ReadTally",
    "excerpt",
    "json_lines",
    "load_document",
    "parse_arguments",
    "parse_time",
    "plausible_time",
]

EXCERPT_CHARS = 200
# A result is kept whole up to 64 KiB, the corpora builder's cap: the result-aware breakers
# judge it (a test run's first 200 characters are its header, the same every time).
RESULT_CHARS = 64 * 1024
MAX_DOCUMENT_ENV = "LOOPFUSE_MAX_DOCUMENT_MB"


def max_document_problem(raw: str | None) -> str | None:
    """Why ``raw`` cannot be ``$LOOPFUSE_MAX_DOCUMENT_MB``; None when it can (or is unset)."""
    if raw is None or _megabytes(raw) is not None:
        return None
    return f"{MAX_DOCUMENT_ENV} = {raw!r} is not allowed: expected a whole number of megabytes >= 1"


def _megabytes(raw: str) -> int | None:
    digits = raw.strip()
    if not (digits.isascii() and digits.isdigit() and len(digits) <= 12):
        return None  # '²' is a digit int() refuses; 13 digits of megabytes is no limit
    return int(digits) or None


_RAW_MAX = os.environ.get(MAX_DOCUMENT_ENV)
MAX_DOCUMENT_BYTES = ((_megabytes(_RAW_MAX) if _RAW_MAX is not None else None) or 256) * 1024 * 1024
_PENDING_LIMIT = 4096
REPORT_BYTES = 256 * 1024  # how often readers tell the tally's progress how far they got
_LATEST = 253402300799.0  # 9999-12-31T23:59:59Z: a time beyond this is damage, not a timestamp


def json_lines(path: Path, tally: ReadTally, wanted: tuple[str, ...] = ()) -> Iterator[dict[str, Any]]:
    """Each line of ``path`` that is a JSON object, streamed. When ``wanted`` is given,
    lines containing none of those substrings are not decoded or parsed (the fast path)."""
    needles = tuple(w.encode() for w in wanted)
    with path.open("rb") as lines:
        unreported = _skip_bom(lines)
        for number, line in enumerate(lines, 1):
            unreported += len(line)
            if unreported >= REPORT_BYTES:
                tally.read_bytes(unreported)
                unreported = 0
            if needles and not _mentions(line, needles):
                if not line.rstrip().endswith(b"}") and line.strip():
                    tally.malformed_line(path, number)  # a damaged line, though not one we needed
                continue
            try:
                row = _decode(line.decode("utf-8", "replace"))  # a bad byte in a result: U+FFFD
            except ValueError:  # UnicodeDecodeError included
                if line.strip():
                    tally.malformed_line(path, number)
                continue
            if isinstance(row, dict):
                yield row
            else:
                tally.malformed_line(path, number)
    tally.read_bytes(unreported)


_decode = json.JSONDecoder().decode  # no per-line encoding detection, unlike json.loads(bytes)


def _skip_bom(handle: BinaryIO) -> int:
    """Moves past a UTF-8 byte order mark at the start; how many bytes that was."""
    if handle.read(len(codecs.BOM_UTF8)) == codecs.BOM_UTF8:
        return len(codecs.BOM_UTF8)
    handle.seek(0)
    return 0


def _mentions(line: bytes, needles: tuple[bytes, ...]) -> bool:
    for needle in needles:  # noqa: SIM110 (a plain loop: this is the hot path)
        if needle in line:
            return True
    return False


def load_document(path: Path, tally: ReadTally) -> Any:
    """A whole-file JSON document, or None (recorded in ``tally``) when too large or malformed.

    Used only by formats that are one JSON document; the size bound keeps memory bounded.
    """
    if path.stat().st_size > MAX_DOCUMENT_BYTES:
        tally.skip_too_large(path, MAX_DOCUMENT_BYTES)
        return None
    try:
        return json.loads(_read_counted(path, tally).decode("utf-8-sig", errors="replace"))
    except json.JSONDecodeError as exc:
        tally.skip_malformed(path, f"not valid JSON at line {exc.lineno}: {exc.msg}")
        return None


def _read_counted(path: Path, tally: ReadTally) -> bytearray:
    data = bytearray()
    with path.open("rb") as handle:
        while chunk := handle.read(REPORT_BYTES):
            data += chunk
            tally.read_bytes(len(chunk))
    return data


def excerpt(value: Any, limit: int = EXCERPT_CHARS) -> str | None:
    """The first ``limit`` characters of a result, whatever its shape."""
    if value is None:
        return None
    if isinstance(value, str):
        return value[:limit]
    if isinstance(value, list):
        texts = [_block_text(v, limit) for v in value]
        return "\n".join(t for t in texts if t)[:limit]
    if isinstance(value, dict):
        return _block_text(value, limit)[:limit]
    return str(value)[:limit]


def _block_text(block: Any, limit: int) -> str:
    if isinstance(block, str):
        return block
    if isinstance(block, dict):
        for key in ("text", "output", "content", "error"):
            if isinstance(block.get(key), str):
                return str(block[key])
        return json.dumps(block, ensure_ascii=False)[:limit]
    return str(block)


def parse_time(value: Any) -> float | None:
    """Seconds since the epoch from an ISO-8601 string or a number (milliseconds when
    above 1e11), else None; so is a time that is not finite or beyond the year 9999."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return plausible_time(value / 1000 if 1e11 < value <= _LATEST * 1000 else value)
    if not isinstance(value, str) or not value:
        return None
    try:
        return plausible_time(datetime.fromisoformat(value).timestamp())  # 3.11+ reads a trailing "Z"
    except (ValueError, OverflowError, OSError):  # OSError: a local time the platform cannot convert
        return None


def plausible_time(value: Any) -> float | None:
    """``value`` as seconds when it is a finite number no further from zero than the end of
    the year 9999 (times may be relative), else None: ``Infinity``, ``NaN``, 1e308 are damage."""
    if not isinstance(value, int | float) or isinstance(value, bool):
        return None
    return float(value) if abs(value) <= _LATEST else None  # False for NaN; no float() of 10**400


class _Open:
    __slots__ = ("agent", "args", "ok", "resolved", "result", "step", "time", "tool")

    def __init__(self, agent: str, step: int, tool: str, args: Any, time: float | None) -> None:
        self.agent, self.step, self.tool, self.args, self.time = agent, step, tool, args, time
        self.result: str | None = None
        self.ok: bool | None = None
        self.resolved = False


class CallQueue:
    """Calls of one run in order, each released once its result (matched by id) arrived
    and every earlier call was released; at most ``_PENDING_LIMIT`` wait at once."""

    def __init__(self, run: str) -> None:
        self.run = run
        self._open: dict[str, _Open] = {}
        self._steps = 0
        self._anonymous = 0

    @property
    def count(self) -> int:
        """How many calls were added so far."""
        return self._steps

    def add(self, key: Any, agent: str, tool: str, args: Any, time: float | None) -> Iterator[ToolCall]:
        """Adds a call; a ``key`` that is not a string (missing, or damaged) pairs with no result."""
        if not isinstance(key, str) or key in self._open:  # none, a repeat, or damaged (a list...)
            self._anonymous += 1
            key = f"\0{self._anonymous}"
        self._open[key] = _Open(agent, self._steps, tool, args if args is not None else {}, time)
        self._steps += 1
        if len(self._open) > _PENDING_LIMIT:
            yield self._pop_first()
        yield from self._release()

    def add_done(self, agent: str, tool: str, args: Any, time: float | None) -> Iterator[ToolCall]:
        """Adds a call recorded with no result of its own (a hosted tool's): released in order."""
        self._anonymous += 1
        key = f"\0{self._anonymous}"
        yield from self.add(key, agent, tool, args, time)
        yield from self.resolve(key, None, None)

    def resolve(self, key: Any, result: Any, ok: bool | None) -> Iterator[ToolCall]:
        call = self._open.get(key) if isinstance(key, str) else None
        if call is None:
            return
        call.result, call.ok, call.resolved = excerpt(result, RESULT_CHARS), ok, True
        yield from self._release()

    def drain(self) -> Iterator[ToolCall]:
        while self._open:
            yield self._pop_first()

    def _release(self) -> Iterator[ToolCall]:
        while self._open and next(iter(self._open.values())).resolved:
            yield self._pop_first()

    def _pop_first(self) -> ToolCall:
        key = next(iter(self._open))
        c = self._open.pop(key)
        return ToolCall(self.run, c.agent, c.step, c.tool, c.args, c.time, c.result, c.ok)


def parse_arguments(raw: Any) -> Any:
    """Function-call arguments as recorded (usually a JSON string) as a value."""
    if not isinstance(raw, str):
        return raw if raw is not None else {}
    try:
        return json.loads(raw)
    except ValueError:
        return {"raw": raw}
