"""``loopfuse replay [PATH...] --config FILE``: where a guard would have stopped recorded runs.

Shadow mode: every recorded call goes through the guard, nothing runs and nothing is
logged; per run, the denials, the first denial step and the calls that would have been
saved. PATHs are files or folders in any format ``loopfuse scan`` reads; as for ``scan``, a
file named that is not a recorded session or cannot be read is a usage error (exit 2).
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from ..analysis.replay import AgentReplay, replay_calls
from ..analysis.transcripts.base import ReadTally
from ..analysis.transcripts.detect import Source, read_source, sources
from ..errors import ConfigError
from ..guard import Guard
from .common import named_but_unread, shadow_guard, shown, unusable_file, usage_error

__all__ = ["register", "run"]


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("replay", help="replay recorded tool calls through a guard configuration")
    parser.add_argument(
        "paths", nargs="+", metavar="PATH", help="recorded sessions (files or folders, any format)"
    )
    parser.add_argument("--config", help="guard configuration (TOML, JSON or YAML); default: discovered")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    missing = [p for p in args.paths if not os.path.exists(p)]
    if missing:
        return usage_error(f"no such file or folder: {missing[0]}")
    paths = [Path(p) for p in args.paths]
    problem = unusable_file(paths)  # as scan: a file named must be a session loopfuse reads
    if problem is not None:
        return usage_error(problem)
    try:
        guard = shadow_guard(args.config)
    except ConfigError as exc:
        return usage_error(str(exc))
    tally = ReadTally()
    for source in sources(paths, tally):
        _replay_source(source, guard, tally)
    print(tally.summary())
    unread = named_but_unread(paths, tally)  # a named session that turned out damaged
    return 0 if unread is None else usage_error(unread)


def _replay_source(source: Source, guard: Guard, tally: ReadTally) -> None:
    reports = replay_calls(read_source(source, tally), guard)
    runs: dict[str, list[AgentReplay]] = {}
    for report in reports:
        runs.setdefault(report.run, []).append(report)
    for run_name, agents in runs.items():
        _print_run(f"{run_name} ({source.path}, {source.format})", agents)


def _print_run(title: str, reports: list[AgentReplay]) -> None:
    print(shown(f"== {title}"))
    denials = [d for r in reports for d in r.denials]
    if denials:
        print(f"  {'step':>6}  {'agent':<16} {'tool':<20} {'kind':<10} count/limit")
    for d in denials:
        print(shown(f"  {d.step:>6}  {d.agent:<16} {d.tool:<20} {d.kind:<10} {d.count}/{d.limit}"))
    print(f"  {'agent':<16} {'calls':>6} {'denied':>7} {'first denial':>13} {'saved':>6}")
    for r in reports:
        first = "-" if r.first_denial_step is None else str(r.first_denial_step)
        print(shown(f"  {r.agent:<16} {r.calls:>6} {len(r.denials):>7} {first:>13} {r.saved:>6}"))
