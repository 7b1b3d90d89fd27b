"""loopfuse's normalized JSON lines: an optional ``{"meta": {...}}`` line, then one call a line.

A call line is ``{"step": i, "tool": str, "args": {...}, "ok": bool|null, "output": str|null,
"output_excerpt": str|null, "agent": str}``; only ``tool`` is required. ``output`` is the
whole result, ``output_excerpt`` its start (read when there is no ``output``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .base import REPORT_BYTES, ReadTally, plausible_time
from .model import ToolCall

__all__ = ["looks_normalized", "read_normalized", "row_call"]


def looks_normalized(first_line: str) -> bool:
    """Whether a file whose first line is ``first_line`` is in this format."""
    try:
        row = json.loads(first_line)
    except (ValueError, RecursionError):
        return False
    return isinstance(row, dict) and ("meta" in row or ("tool" in row and "args" in row))


def read_normalized(
    path: str | Path, skipped: list[int] | None = None, tally: ReadTally | None = None
) -> Iterator[ToolCall]:
    """The file's calls in order, streamed; malformed lines are skipped (their numbers
    appended to ``skipped`` when given, and counted in ``tally``)."""
    p = Path(path)
    run = p.stem
    for number, line in _lines(p, tally):
        row = _parse(line)
        if row is None:
            _skip(line, (p, number), skipped, tally)
            continue
        if "meta" in row:
            run = str(row["meta"].get("id", run)) if isinstance(row["meta"], dict) else run
            continue
        yield row_call(row, run, number)


def _lines(path: Path, tally: ReadTally | None) -> Iterator[tuple[int, str]]:
    """The file's lines, numbered; ``tally`` is told how far reading got."""
    unreported = 0
    with path.open(encoding="utf-8-sig", errors="replace") as lines:  # "-sig": without a BOM
        for number, line in enumerate(lines, 1):
            unreported += len(line)
            if tally is not None and unreported >= REPORT_BYTES:
                tally.read_bytes(unreported)
                unreported = 0
            yield number, line
    if tally is not None:
        tally.read_bytes(unreported)


def _skip(line: str, where: tuple[Path, int], skipped: list[int] | None, tally: ReadTally | None) -> None:
    if not line.strip():
        return
    if skipped is not None:
        skipped.append(where[1])
    if tally is not None:
        tally.malformed_line(*where)


def _parse(line: str) -> dict[str, Any] | None:
    try:
        row = json.loads(line)
    except (ValueError, RecursionError):
        return None
    if not isinstance(row, dict) or not ("meta" in row or isinstance(row.get("tool"), str)):
        return None
    return row


def row_call(row: dict[str, Any], run: str, number: int) -> ToolCall:
    """One normalized row as a call; its result is the row's whole ``output``, else its
    ``output_excerpt`` (what scan, replay and eval pass the guard, alike)."""
    step = row.get("step")
    ok = row.get("ok")
    return ToolCall(
        run=run,
        agent=str(row.get("agent") or "agent"),
        step=step if isinstance(step, int) else number,
        tool=row["tool"],
        args=row.get("args") if row.get("args") is not None else {},
        time=plausible_time(row.get("time")),  # None for Infinity, NaN and other damage
        result=_result(row),
        ok=ok if isinstance(ok, bool) else None,
    )


def _result(row: dict[str, Any]) -> str | None:
    for field in ("output", "output_excerpt"):
        if isinstance(row.get(field), str):
            return str(row[field])
    return None
