"""``loopfuse incidents [PATH] [--follow] [--json]``: the guard's incident log, readable."""

from __future__ import annotations

import argparse
import json
import math
import os
import stat
import sys
import time
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
        type=_interval,
        default=0.5,
        help=f"seconds between reads with --follow (clamped to {MIN_INTERVAL}-{MAX_INTERVAL})",
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    try:
        configured = _configured_log(args.config) if args.config or not args.path else None
        path = args.path or configured  # a --config given is read, and must be valid, with a PATH too
    except (ConfigError, OSError) as exc:
        return usage_error(str(exc))
    if path is None:
        return usage_error("no incident log: pass PATH or set [guard] incident_log in the configuration")
    problem = _not_a_log(path)
    if problem is not None:
        return usage_error(problem)
    if not args.follow and not os.path.exists(path):
        print(
            f"loopfuse: no incident log at {os.path.abspath(path)} yet (the guard creates it at the"
            " first denial; a relative incident_log is relative to the folder the guarded program runs in)",
            file=sys.stderr,
        )
        return 0
    try:
        return _show(path, args)
    except KeyboardInterrupt:
        sys.stdout.flush()
    return 0


def _interval(text: str) -> float:
    """``--interval``: a finite number of seconds above 0 (clamped later to the bounds)."""
    try:
        seconds = float(text)
    except ValueError:
        seconds = math.nan
    if not math.isfinite(seconds) or seconds <= 0:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a number of seconds above 0 (it is clamped to {MIN_INTERVAL}-{MAX_INTERVAL})"
        )
    return seconds


def _not_a_log(path: str) -> str | None:
    """Why ``path`` cannot be read as an incident log, or None (a log not created yet is fine)."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"cannot read the incident log {path}: {exc.strerror or exc}"
    if stat.S_ISDIR(mode):
        return f"{path} is a folder, not an incident log (a JSON-lines file)"
    if not stat.S_ISREG(mode):
        return f"{path} is not a regular file, not an incident log (a JSON-lines file)"
    return None


def _show(path: str, args: argparse.Namespace) -> int:
    """Print the log to its end, then with ``--follow`` what is appended; 2 if it cannot be opened."""
    interval = min(max(args.interval, MIN_INTERVAL), MAX_INTERVAL)
    with IncidentReader(path) as reader:
        if not args.json and reader.error is None:
            print(_HEADER)
        error = _print_to_end(reader, args.json)
        while error is None and args.follow:
            time.sleep(interval)
            error = _print_to_end(reader, args.json)
    return 0 if error is None else usage_error(f"cannot read the incident log {path}: {error}")


def _print_to_end(reader: IncidentReader, as_json: bool) -> str | None:
    """Print every record past the reader's offset, and on stderr how many lines were not
    incidents; why the log cannot be opened, or None."""
    skipped = reader.skipped
    for batch in reader.read_batches():
        _print(batch, as_json)
    if reader.skipped > skipped:
        sys.stdout.flush()
        lines = reader.skipped - skipped
        print(f"loopfuse: {lines} line{'s' * (lines > 1)} skipped (not incidents)", file=sys.stderr)
    return None if reader.error is None else reader.error.strerror or str(reader.error)


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
