"""``loopfuse scan [PATH...]``: find loops in recorded agent sessions.

One row per agent run, worst first. The verdict comes from the breakers: every run is
replayed through the configured guard (``--config``, else the configuration discovered,
else the defaults) in shadow mode, as ``loopfuse replay`` does; ``loop`` means a breaker
would deny a call, and the row names the first breaker, its rule and its step. With no PATH, the default session folders of the
supported agents that exist here are searched (and named). Exit status: 0 done, 1 loops
found (only with ``--fail-on-loop``), 2 usage error (including a file named on the command
line that cannot be read or is not a recorded session).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from ..analysis.replay import shadow_config
from ..analysis.scanreport import render_html
from ..analysis.scanstats import RunStats, scan_calls, worst_first
from ..analysis.transcripts.base import ReadTally
from ..analysis.transcripts.detect import (
    Source,
    default_folders,
    read_source,
    sources,
)
from ..config import GuardConfig
from ..errors import ConfigError
from ..guard import Guard
from .common import found_config, named_but_unread, shown, unusable_file, usage_error
from .scan_charts import CHART_LIMIT, ChartedRows, breaker_configs, breaker_markers
from .scan_output import common_root, print_json, print_table, root_label, shown_path, skipped_list
from .scan_progress import Progress

__all__ = ["CHART_LIMIT", "breaker_configs", "register", "run"]


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("scan", help="find loops in recorded agent sessions")
    parser.add_argument(
        "paths", nargs="*", metavar="PATH", help="session files or folders (default: agents' folders)"
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.add_argument("--html", metavar="FILE", help="write a self-contained HTML report with timelines")
    parser.add_argument("--fail-on-loop", action="store_true", help="exit 1 when a loop is found (for CI)")
    parser.add_argument("--show-args", action="store_true", help="show the most repeated call's arguments")
    parser.add_argument(
        "--config", help="guard configuration whose breakers decide the verdicts (default: discovered)"
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    checked = _checked(args)
    if isinstance(checked, str):
        return usage_error(checked)
    paths, searched, config = checked
    tally, root = ReadTally(), common_root(paths)
    rows, by_path = _scan(paths, (root, tally, Guard(_verdict_config(config))), args)
    unread = named_but_unread(paths, tally)
    if unread is not None:
        return usage_error(unread)
    if args.html:
        _write_html(args.html, rows, by_path, config, (searched, tally, root))
    if args.json:
        print_json(rows, searched, tally, root)
    else:
        print_table(rows, searched, tally, root, args.show_args)
    found = any(r.verdict == "loop" for r in rows)
    return 1 if args.fail_on_loop and found else 0


def _checked(args: argparse.Namespace) -> tuple[list[Path], list[str], GuardConfig] | str:
    """The paths to scan, how to name them, and the configuration; or what is wrong."""
    paths, searched = _paths(args.paths)
    if paths is None:
        return f"no such file or folder: {searched[0]}"
    problem = unusable_file(paths)
    if problem is not None:
        return problem
    try:
        config = found_config(args.config)
    except ConfigError as exc:
        return str(exc)
    if args.html and not _writable(args.html):
        return f"cannot write the HTML report to {args.html}"
    return paths, searched, config


def _verdict_config(config: GuardConfig) -> GuardConfig:
    """The guard scan replays for its verdict: ``config`` in shadow, without the call cap
    (a budget, not a loop: a long session is no loop; the charts still mark the cap)."""
    cb = dataclasses.replace(config.circuit_breaker, max_calls_per_agent=0)
    return shadow_config(dataclasses.replace(config, circuit_breaker=cb))


def _paths(given: Sequence[str]) -> tuple[list[Path] | None, list[str]]:
    if given:
        missing = [p for p in given if not os.path.exists(p)]
        return (None, missing) if missing else ([Path(p) for p in given], list(given))
    found = [(fmt, folder) for fmt, folder in default_folders() if folder.is_dir()]
    searched = [f"{folder} ({fmt})" for fmt, folder in found] or ["no default session folder exists"]
    return [folder for _, folder in found], searched


def _writable(path: str) -> bool:
    """Whether a report can be written at ``path``: a new or regular file in a folder we may write."""
    target = Path(path).resolve()
    if target.exists() and not target.is_file():
        return False  # a folder, a FIFO, a device
    return target.parent.is_dir() and os.access(target.parent, os.W_OK)


def _scan(
    paths: list[Path], context: tuple[Path, ReadTally, Guard], args: argparse.Namespace
) -> tuple[list[RunStats], dict[str, Source]]:
    """The rows, worst first, and each source by its shown path."""
    root, tally, guard = context
    charts = ChartedRows(CHART_LIMIT if args.html else 0)
    by_path: dict[str, Source] = {}
    progress = Progress(paths, sys.stderr)
    tally.progress = progress.read
    for source in _once(sources(paths, tally)):
        shown = shown_path(source.path, root)
        by_path[shown] = source
        progress.start(source.path)
        calls = read_source(source, tally)
        for row in scan_calls(calls, keep_args=args.show_args, timeline=bool(args.html), guard=guard):
            charts.add(dataclasses.replace(row, path=shown))
        progress.finish()
    progress.close()
    tally.progress = None
    return worst_first(_distinct_names(charts.rows)), by_path


def _once(found: Iterable[Source]) -> Iterator[Source]:
    """Each source once, though named twice (a file and its folder, say)."""
    seen: set[str] = set()
    for source in found:
        key = os.path.abspath(source.path)
        if key not in seen:
            seen.add(key)
            yield source


def _distinct_names(rows: list[RunStats]) -> list[RunStats]:
    """Rows whose path, run and agent are all the same (one file recording two runs of the
    same name) get ``#2``, ``#3``... after the run name: no two rows show the same."""
    seen: Counter[tuple[str, str, str]] = Counter()
    out: list[RunStats] = []
    for row in rows:
        key = (row.path, row.run, row.agent)
        seen[key] += 1
        out.append(row if seen[key] == 1 else dataclasses.replace(row, run=f"{row.run}#{seen[key]}"))
    return out


def _write_html(
    target: str,
    rows: list[RunStats],
    by_path: dict[str, Source],
    config: GuardConfig,
    context: tuple[list[str], ReadTally, Path],
) -> None:
    searched, tally, root = context
    charted = {r.path: by_path[r.path] for r in rows if r.timeline}
    page = render_html(
        rows,
        breaker_markers(charted, config),
        searched,
        tally.summary(),
        skipped_files=[(s["path"], s["reason"]) for s in skipped_list(tally, root)],
        root=root_label(root),
    )
    _write_whole(Path(target), page)


def _utf8(text: str) -> bytes:
    """``text`` in UTF-8, each lone surrogate as U+FFFD."""
    return shown(text).encode("utf-8")


def _write_whole(target: Path, page: str) -> None:
    """``page`` at ``target``, written beside it and then renamed: a report is whole or not
    there, never a report cut short over the last one. Text that is not valid Unicode (a lone
    surrogate, from undecodable bytes in a session) shows as U+FFFD."""
    temporary = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        temporary.write_bytes(_utf8(page))
        os.replace(temporary, target)
    finally:
        temporary.unlink(missing_ok=True)
