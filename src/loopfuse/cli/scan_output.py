"""What ``loopfuse scan`` prints: the table (or JSON) of runs, where each came from, and
each file skipped with why."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ..analysis.scanstats import RunStats
from ..analysis.transcripts.tally import ReadTally

__all__ = [
    "SKIPPED_SHOWN",
    "common_root",
    "print_json",
    "print_table",
    "root_label",
    "shown_path",
    "skipped_list",
]

SKIPPED_SHOWN = 10  # skipped files listed under the table (--json lists them all)

_COLUMNS: tuple[tuple[str, str, Callable[[RunStats], str]], ...] = (
    ("verdict", "<", lambda r: r.verdict),
    ("run", "<", lambda r: r.run),
    ("agent", "<", lambda r: r.agent),
    ("calls", ">", lambda r: str(r.calls)),
    ("distinct", ">", lambda r: r.distinct_text),
    ("duration", ">", lambda r: r.duration_text),
    ("most repeated", "<", lambda r: r.top_text),
    ("in a row", ">", lambda r: str(r.longest_run)),
    ("cycle", ">", lambda r: r.cycle_text),
    ("repeats at", ">", lambda r: r.loop_start_text),
    ("breaker", "<", lambda r: r.breaker or "-"),
    ("rule", "<", lambda r: r.rule or "-"),
    ("denied at", ">", lambda r: r.denied_at_text),
)


def common_root(paths: Sequence[Path]) -> Path:
    """The deepest folder holding every scanned path: run paths are shown relative to it."""
    folders = [os.path.abspath(p if p.is_dir() else p.parent) for p in paths]
    return Path(os.path.commonpath(folders)) if folders else Path.cwd()


def shown_path(path: Path, root: Path) -> str:
    absolute = Path(os.path.abspath(path))
    try:
        return absolute.relative_to(root).as_posix()
    except ValueError:
        return str(absolute)


def root_label(root: Path) -> str:
    """``root`` as the user would type it here: relative to the current folder when under it."""
    try:
        return root.relative_to(Path.cwd()).as_posix()
    except ValueError:
        return str(root)


def skipped_list(tally: ReadTally, root: Path) -> list[dict[str, str]]:
    return [{"path": shown_path(s.path, root), "reason": s.reason} for s in tally.skipped]


def print_json(rows: Sequence[RunStats], searched: Sequence[str], tally: ReadTally, root: Path) -> None:
    out = {
        "searched": list(searched),
        "root": str(root),
        "runs": [r.as_dict() for r in rows],
        "skipped": _counts(tally),  # the shipped shape: counts by cause
        "skipped_files": skipped_list(tally, root),
    }
    print(json.dumps(out, indent=2))


def _counts(tally: ReadTally) -> dict[str, Any]:
    return {
        "formats": dict(tally.formats),
        "unknown_files": tally.unknown_files,
        "malformed": tally.malformed,
        "too_large": tally.too_large,
        "unreadable": tally.unreadable,
        "skipped_not_listed": tally.skipped_unlisted,
    }


def print_table(
    rows: Sequence[RunStats], searched: Sequence[str], tally: ReadTally, root: Path, show_args: bool
) -> None:
    print(f"searched: {', '.join(searched)}")
    for line, row in zip(_table(rows, root_label(root)), [None, *rows], strict=True):
        print(line)
        if show_args and row is not None and row.top_args is not None:
            print(f"         most repeated arguments: {printable(row.top_args[:300])}")
    for line in _skipped_lines(tally, root):
        print(line)
    print(tally.summary())


def _table(rows: Sequence[RunStats], root: str) -> list[str]:
    """The header and one line per run: every column as wide as its widest value (names
    are never cut), the path last."""
    header = [name for name, _, _ in _COLUMNS]
    cells = [[printable(get(r)) for _, _, get in _COLUMNS] for r in rows]
    widths = [max(len(c[i]) for c in [header, *cells]) for i in range(len(header))]
    aligns = [align for _, align, _ in _COLUMNS]
    path_head = "path" if root == "." else f"path (under {printable(root)})"
    lines = [_line(header, widths, aligns) + " " + path_head]
    lines += [_line(c, widths, aligns) + " " + printable(r.path) for c, r in zip(cells, rows, strict=True)]
    return lines


def _line(cells: list[str], widths: list[int], aligns: list[str]) -> str:
    return " ".join(f"{c:{a}{w}}" for c, w, a in zip(cells, widths, aligns, strict=True))


def _skipped_lines(tally: ReadTally, root: Path) -> list[str]:
    skipped = skipped_list(tally, root)
    if not skipped:
        return []
    lines = ["skipped:"] + [
        f"  {printable(s['path'])}: {printable(s['reason'])}" for s in skipped[:SKIPPED_SHOWN]
    ]
    more = len(skipped) - SKIPPED_SHOWN + tally.skipped_unlisted
    if more > 0:
        lines.append(f"  ... and {more} more (--json lists them)")
    return lines


def printable(text: str) -> str:
    """``text`` safe for a terminal: control characters (from a session file) escaped."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text)
