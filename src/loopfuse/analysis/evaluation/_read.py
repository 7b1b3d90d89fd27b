"""Reading one recorded run for scoring: normalized corpus files with each call's whole
``output``, any other format through the transcript readers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..transcripts.base import ReadTally
from ..transcripts.detect import read_path
from ..transcripts.model import ToolCall
from ..transcripts.normalized import looks_normalized, row_call

__all__ = ["read_run"]


def read_run(path: Path, tally: ReadTally | None = None) -> tuple[ToolCall, ...]:
    """The run's calls; a normalized file's calls carry the whole ``output`` as result."""
    if path.suffix == ".jsonl" and looks_normalized(_first_line(path)):
        if tally is not None:
            tally.formats["normalized"] += 1
        return tuple(_normalized_calls(path, tally))
    return tuple(read_path(path, tally))


def _first_line(path: Path) -> str:
    with path.open(encoding="utf-8", errors="replace") as lines:
        return lines.readline()


def _normalized_calls(path: Path, tally: ReadTally | None) -> list[ToolCall]:
    run, calls = path.stem, []
    with path.open(encoding="utf-8", errors="replace") as lines:
        for number, line in enumerate(lines, 1):
            row = _row(line)
            if row is None:
                if tally is not None and line.strip():
                    tally.malformed += 1
            elif isinstance(row.get("meta"), dict):
                run = str(row["meta"].get("id", run))
            elif isinstance(row.get("tool"), str):
                calls.append(row_call(row, run, number))
    return calls


def _row(line: str) -> dict[str, Any] | None:
    try:
        row = json.loads(line)
    except (ValueError, RecursionError):
        return None
    return row if isinstance(row, dict) else None
