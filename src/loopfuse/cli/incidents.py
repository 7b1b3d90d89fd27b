"""``loopfuse incidents [PATH] [--follow] [--json]``: the guard's incident log, readable."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from ..config import find_config_file, parse_config_file
from ..errors import ConfigError
from ..incidents import IncidentReader
from .common import usage_error

__all__ = ["register", "run"]

MIN_INTERVAL, MAX_INTERVAL = 0.05, 5.0
_HEADER = f"{'time':<20}  {'agent':<20} {'kind':<14} {'tool':<24} count/limit"


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("incidents", help="show the incident log (first denial per agent and kind)")
    parser.add_argument("path", nargs="?", metavar="PATH", help="default: incident_log of the configuration")
    parser.add_argument("--config", help="configuration to take incident_log from; default: discovered")
    parser.add_argument("--follow", "-f", action="store_true", help="keep printing lines as they arrive")
    parser.add_argument("--json", action="store_true", help="print each incident as one JSON line")
    parser.add_argument(
        "--interval",
        type=float,
        default=0.5,
        help=f"seconds between reads with --follow (clamped to {MIN_INTERVAL}-{MAX_INTERVAL})",
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    try:
        path = args.path or _configured_log(args.config)
    except (ConfigError, OSError) as exc:
        return usage_error(str(exc))
    if path is None:
        return usage_error("no incident log: pass PATH or set [guard] incident_log in the configuration")
    if not args.follow and not Path(path).is_file():
        print(
            f"loopfuse: no incident log at {path} yet (the guard creates it at the first denial)",
            file=sys.stderr,
        )
        return 0
    if not args.json:
        print(_HEADER)
    interval = min(max(args.interval, MIN_INTERVAL), MAX_INTERVAL)
    try:
        with IncidentReader(path) as reader:
            _print(reader.read(), args.json)
            while args.follow:
                time.sleep(interval)
                _print(reader.read(), args.json)
    except KeyboardInterrupt:
        sys.stdout.flush()
    return 0


def _configured_log(config_path: str | None) -> str | None:
    found = find_config_file(config_path)
    if found is None:
        return None
    return parse_config_file(found).circuit_breaker.incident_log


def _print(records: list[dict[str, Any]], as_json: bool) -> None:
    for record in records:
        print(json.dumps(record, ensure_ascii=False) if as_json else _row(record))
    sys.stdout.flush()


def _row(record: dict[str, Any]) -> str:
    agent = record.get("agent")
    if not isinstance(agent, str):
        agent = "<object>" if "agent_keys" in record else "?"
    cells = (_cell(record.get("time"), 20), _cell(agent, 20), _cell(record.get("kind"), 14))
    counts = f"{_cell(record.get('count'), 0)}/{_cell(record.get('limit'), 0)}"
    return f"{cells[0]}  {cells[1]} {cells[2]} {_cell(record.get('tool'), 24)} {counts}"


def _cell(value: Any, width: int) -> str:
    text = "?" if value is None else str(value)
    return "".join(c if c.isprintable() else "?" for c in text).ljust(width)
