"""``loopfuse replay FILE... [--config FILE]``: where a guard would have stopped recorded runs."""

from __future__ import annotations

import argparse
from collections.abc import Iterator

from ..errors import ConfigError
from ..replay import AgentReplay, replay_calls
from ..transcripts.model import ToolCall
from ..transcripts.normalized import read_normalized
from .common import shadow_guard, usage_error


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("replay", help="replay recorded tool calls through a guard configuration")
    parser.add_argument("paths", nargs="+", metavar="FILE", help="recorded runs (normalized JSON lines)")
    parser.add_argument("--config", help="guard configuration (TOML or YAML); default: discovered")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    try:
        guard = shadow_guard(args.config)
    except ConfigError as exc:
        return usage_error(str(exc))
    for path in args.paths:
        try:
            reports = replay_calls(_calls(path), guard)
        except OSError as exc:
            print(f"{path}: cannot read: {exc.strerror}")
            continue
        _print_run(path, reports)
    return 0


def _calls(path: str) -> Iterator[ToolCall]:
    yield from read_normalized(path)


def _print_run(path: str, reports: list[AgentReplay]) -> None:
    print(f"== {path}")
    denials = [d for r in reports for d in r.denials]
    if denials:
        print(f"  {'step':>6}  {'agent':<16} {'tool':<20} {'kind':<10} count/limit")
    for d in denials:
        print(f"  {d.step:>6}  {d.agent:<16} {d.tool:<20} {d.kind:<10} {d.count}/{d.limit}")
    print(f"  {'agent':<16} {'calls':>6} {'denied':>7} {'first denial':>13} {'saved':>6}")
    for r in reports:
        first = "-" if r.first_denial_step is None else str(r.first_denial_step)
        print(f"  {r.agent:<16} {r.calls:>6} {len(r.denials):>7} {first:>13} {r.saved:>6}")
