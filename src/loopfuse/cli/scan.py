"""``loopfuse scan [PATH...]``: find loops in recorded agent sessions.

One row per agent run, worst first. With no PATH, the default session folders of the
supported agents that exist here are searched (and named). Exit status: 0 done, 1 loops
found (only with ``--fail-on-loop``), 2 usage error (including a file named on the command
line that cannot be read or is not a recorded session).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from ..config import GuardConfig, find_config_file, parse_config, parse_config_file
from ..errors import ConfigError
from ..guard import Guard
from ..replay import replay_calls
from ..scanreport import render_html
from ..scanstats import RunStats, scan_calls, worst_first
from ..transcripts.base import ReadTally
from ..transcripts.detect import Source, default_folders, read_source, sniff, sources
from .common import usage_error

CHART_LIMIT = 100


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("scan", help="find loops in recorded agent sessions")
    parser.add_argument(
        "paths", nargs="*", metavar="PATH", help="session files or folders (default: agents' folders)"
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.add_argument("--html", metavar="FILE", help="write a self-contained HTML report with timelines")
    parser.add_argument("--fail-on-loop", action="store_true", help="exit 1 when a loop is found (for CI)")
    parser.add_argument("--show-args", action="store_true", help="show the most repeated call's arguments")
    parser.add_argument("--config", help="guard configuration whose breakers the HTML report marks")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    paths, searched = _paths(args.paths)
    if paths is None:
        return usage_error(f"no such file or folder: {searched[0]}")
    problem = _unusable_file(paths)
    if problem is not None:
        return usage_error(problem)
    try:
        config = _config(args.config)
    except ConfigError as exc:
        return usage_error(str(exc))
    if args.html and not _writable(args.html):
        return usage_error(f"cannot write the HTML report to {args.html}")
    tally = ReadTally()
    rows, looping = _scan(paths, tally, args)
    rows = worst_first(rows)
    if args.html:
        markers = _breaker_markers(looping[:CHART_LIMIT], config, tally)
        Path(args.html).write_text(render_html(rows, markers, searched, tally.summary()), encoding="utf-8")
    _print(rows, searched, tally, args)
    found = any(r.verdict == "loop" for r in rows)
    return 1 if args.fail_on_loop and found else 0


def _paths(given: Sequence[str]) -> tuple[list[Path] | None, list[str]]:
    if given:
        missing = [p for p in given if not os.path.exists(p)]
        return (None, missing) if missing else ([Path(p) for p in given], list(given))
    found = [(fmt, folder) for fmt, folder in default_folders() if folder.is_dir()]
    searched = [f"{folder} ({fmt})" for fmt, folder in found] or ["no default session folder exists"]
    return [folder for _, folder in found], searched


def _unusable_file(paths: list[Path]) -> str | None:
    """Why a file named on the command line cannot be scanned, or None (folders are walked:
    what they hold that cannot be read is counted, not an error)."""
    for path in paths:
        if path.is_dir():
            continue
        try:
            if sniff(path) is None:
                return f"{path} is not a recorded agent session in a format loopfuse reads"
        except OSError as exc:
            return f"cannot read {path}: {exc.strerror or exc}"
    return None


def _config(path: str | None) -> GuardConfig:
    found = find_config_file(path)
    return parse_config_file(found) if found is not None else parse_config({})


def _writable(path: str) -> bool:
    parent = Path(path).resolve().parent
    return parent.is_dir() and os.access(parent, os.W_OK)


def _scan(
    paths: list[Path], tally: ReadTally, args: argparse.Namespace
) -> tuple[list[RunStats], list[Source]]:
    rows: list[RunStats] = []
    looping: list[Source] = []
    progress = _Progress(paths, sys.stderr)
    for source in sources(paths, tally):
        found = list(
            scan_calls(read_source(source, tally), keep_args=args.show_args, timeline=bool(args.html))
        )
        rows += [r if r.verdict == "loop" else dataclasses.replace(r, timeline=()) for r in found]
        if any(r.verdict == "loop" for r in found):
            looping.append(source)
        progress.advance(source.path)
    progress.close()
    return rows, looping


def breaker_configs(config: GuardConfig) -> dict[str, GuardConfig]:
    """One configuration per configured breaker (the call cap aside: see ``_cap_markers``),
    each with every other breaker off, in memory and without side effects."""
    cb = dataclasses.replace(config.circuit_breaker, incident_log=None, max_calls_per_agent=0)
    off = GuardConfig(
        circuit_breaker=dataclasses.replace(cb, enabled=False),
        loop_brake=None,
        guard=config.guard,
        cycle=dataclasses.replace(config.cycle, enabled=False),
        near_duplicate=dataclasses.replace(config.near_duplicate, enabled=False),
        same_error=dataclasses.replace(config.same_error, enabled=False),
        tools=config.tools,
    )
    candidates: dict[str, tuple[bool, dict[str, Any]]] = {
        "duplicate": (cb.enabled, {"circuit_breaker": cb}),
        "repeat": (
            config.loop_brake is not None and config.loop_brake.enabled,
            {"loop_brake": config.loop_brake},
        ),
        "same_error": (config.same_error.enabled, {"same_error": config.same_error}),
        "near_duplicate": (config.near_duplicate.enabled, {"near_duplicate": config.near_duplicate}),
        "cycle": (config.cycle.enabled, {"cycle": config.cycle}),
    }
    return {name: dataclasses.replace(off, **on) for name, (enabled, on) in candidates.items() if enabled}


def _breaker_markers(
    looping: list[Source], config: GuardConfig, tally: ReadTally
) -> dict[tuple[str, str], dict[str, int | None]]:
    markers: dict[tuple[str, str], dict[str, int | None]] = {}
    scratch = ReadTally()
    for name, alone in breaker_configs(config).items():
        for source in looping:
            for report in replay_calls(read_source(source, scratch), Guard(alone)):
                markers.setdefault((report.run, report.agent), {})[name] = report.first_denial_step
    cap = config.circuit_breaker.max_calls_per_agent
    if config.circuit_breaker.enabled and cap:
        _cap_markers(looping, cap, config.circuit_breaker.exempt, markers)
    return markers


def _cap_markers(
    looping: list[Source],
    cap: int,
    exempt: Sequence[str],
    markers: dict[tuple[str, str], dict[str, int | None]],
) -> None:
    counts: dict[tuple[str, str], int] = {}
    for source in looping:
        for call in read_source(source, ReadTally()):
            key = (call.run, call.agent)
            if call.tool in exempt:
                continue
            counts[key] = counts.get(key, 0) + 1
            if counts[key] == cap + 1:
                markers.setdefault(key, {})["cap"] = call.step


def _print(rows: list[RunStats], searched: list[str], tally: ReadTally, args: argparse.Namespace) -> None:
    if args.json:
        out = {"searched": searched, "runs": [r.as_dict() for r in rows], "skipped": _skipped(tally)}
        print(json.dumps(out, indent=2))
        return
    print(f"searched: {', '.join(searched)}")
    print(f"{'verdict':<8} {'run':<36} {'agent':<14} {'calls':>6} {'distinct':>8} {'duration':>9} "
          f"{'most repeated':<24} {'in a row':>8} {'cycle':>6} {'loop at':>7}")  # fmt: skip
    for r in rows:
        print(_line(r))
        if args.show_args and r.top_args is not None:
            print(f"         most repeated arguments: {r.top_args[:300]}")
    print(tally.summary())


def _line(r: RunStats) -> str:
    duration = "-" if r.duration is None else _seconds(r.duration)
    top = f"{r.top_count}x {r.top_tool or '-'}"
    cycle = f"{r.cycle_repeats}x{r.cycle_period}" if r.cycle_repeats else "-"
    start = "-" if r.loop_start is None else str(r.loop_start)
    distinct = str(r.distinct) if r.distinct_exact else f"~{r.distinct}"
    return (
        f"{r.verdict:<8} {r.run[:36]:<36} {r.agent[:14]:<14} {r.calls:>6} {distinct:>8} {duration:>9} "
        f"{top[:24]:<24} {r.longest_run:>8} {cycle:>6} {start:>7}"
    )


def _seconds(value: float) -> str:
    if value < 120:
        return f"{value:.0f}s"
    return f"{value / 60:.0f}m" if value < 7200 else f"{value / 3600:.1f}h"


def _skipped(tally: ReadTally) -> dict[str, Any]:
    return {
        "formats": dict(tally.formats),
        "unknown_files": tally.unknown_files,
        "malformed": tally.malformed,
        "too_large": tally.too_large,
        "unreadable": tally.unreadable,
    }


class _Progress:
    """A one-line progress bar on ``stream``, only when it is a terminal."""

    def __init__(self, paths: list[Path], stream: TextIO) -> None:
        self._stream = stream
        self._on = stream.isatty()
        self._total = _total_bytes(paths) if self._on else 0
        self._done = 0

    def advance(self, path: Path) -> None:
        if not self._on:
            return
        self._done += _size(path)
        share = self._done / self._total if self._total else 1.0
        bar = "#" * int(share * 30)
        self._stream.write(f"\rscanning [{bar:<30}] {share:4.0%}")
        self._stream.flush()

    def close(self) -> None:
        if self._on:
            self._stream.write("\r" + " " * 50 + "\r")
            self._stream.flush()


def _size(path: Path) -> int:
    try:
        if path.is_dir():
            return sum(p.stat().st_size for p in path.iterdir() if p.is_file())
        return path.stat().st_size
    except OSError:
        return 0


def _total_bytes(paths: list[Path]) -> int:
    total = 0
    for path in paths:
        if path.is_file():
            total += _size(path)
            continue
        for folder, _, files in os.walk(path):
            total += sum(_size(Path(folder) / f) for f in files)
    return total
