"""Instructions per call, counted by valgrind's callgrind (repeatable on a busy machine).

    python bench/instructions.py [ROW ...]
    python bench/instructions.py --breakers   # a reporting host's tool call, each breaker off in turn

Each row runs the ``bench/peers.py`` stream under callgrind twice (500 and 1,500 calls,
``PYTHONHASHSEED=0``) and prints the difference per call, so start-up costs drop out, with
its ratio to the floor (``json.dumps(sort_keys=True)`` + ``sha256``) of the same run. The
tool call row reports results without ``ok``, the next one with ``ok=True``, as the adapters
do (which the re-run rules read). The two "reporting" rows count inside one half of a tool call of a host that reports results
only (callgrind collects inside ``map``, which runs that half). Needs valgrind; the
agent-watchdog row needs ``pip install agent-watchdog`` and is skipped without it.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROWS = {
    "floor": "floor: json.dumps(sort_keys=True) + sha256",
    "watchdog": "agent-watchdog",
    "one_function": "one function: orjson, sha256, the window",
    "check": "loopfuse check, every default breaker",
    "check_pure": "the same without orjson",
    "tool_call": "loopfuse check + record_result (~200 B result)",
    "tool_call_ok": "the same, ok=True (as the adapters report)",
    "reporting_check": "a reporting host's check",
    "reporting_result": "its record_result",
}
SMALL, LARGE = 500, 1_500
# --breakers: a reporting host's two halves with each of these turned off in turn (the window's
# result-aware counts are "result_aware"); the difference from the full guard is its cost.
TURNED_OFF = ("near_duplicate", "stall", "cycle", "result_aware", "same_error", "failures")


def config_without(off: str) -> dict[str, Any]:
    """The bench's guard (the cap lifted) with ``off`` turned off ('' for none)."""
    circuit: dict[str, Any] = {"max_calls_per_agent": 0}
    if off == "result_aware":
        return {"circuit_breaker": {**circuit, "result_aware": False}}
    return {"circuit_breaker": circuit, **({off: {"enabled": False}} if off else {})}


def child(row: str, calls: int) -> None:
    """The work of one row, ``calls`` times: what callgrind counts (``ROW-without:SECTION``: the
    row with that breaker off)."""
    row, _, off = row.partition("-without:")
    sys.path.insert(0, str(HERE))
    from peers import agent_watchdog, floor, one_function, result_of, stream

    import loopfuse._calls
    from loopfuse import Guard

    if row in ("floor", "watchdog", "one_function"):
        peer = {"floor": floor, "watchdog": agent_watchdog, "one_function": one_function}[row]()
        for args in stream(calls):
            peer("search", args)
        return
    if row == "check_pure":
        loopfuse._calls._FAST = None  # the standard library's encoder, as without the extra
    guard = Guard.from_config(config_without(off))

    def check(args: dict[str, Any]) -> object:
        return guard.check("search", args, "agent")

    def report(args: dict[str, Any]) -> object:
        return guard.record_result("search", args, result_of(args), "agent")

    def report_ok(args: dict[str, Any]) -> object:
        return guard.record_result("search", args, result_of(args), "agent", ok=True)

    halves: dict[str, tuple[Callable[[dict[str, Any]], object], ...]] = {
        "check": (check,),
        "check_pure": (check,),
        "tool_call": (check, report),
        "tool_call_ok": (check, report_ok),
        "reporting_check": (lambda args: list(map(check, [args])), report),
        "reporting_result": (check, lambda args: list(map(report, [args]))),
    }
    for args in stream(calls):
        for half in halves[row]:
            half(args)


def counted(row: str, calls: int) -> int:
    """The instructions callgrind counts for ``row`` at ``calls`` calls."""
    toggle = ["--toggle-collect=map_next"] if row.startswith("reporting") else []
    command = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *toggle]
    command += [sys.executable, __file__, "--child", row, str(calls)]
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
    found = re.search(r"refs:\s+([\d,]+)", done.stderr)
    if found is None:
        raise SystemExit(f"no count from callgrind for {row}:\n{done.stderr[-2000:]}")
    return int(found.group(1).replace(",", ""))


def per_call(row: str) -> int:
    return (counted(row, LARGE) - counted(row, SMALL)) // (LARGE - SMALL)


def breaker_costs() -> None:
    """A reporting host's check and ``record_result`` with each breaker turned off in turn."""
    full = per_call("reporting_check"), per_call("reporting_result")
    print(f"{'reporting host, turned off':<34} {'its check':>18} {'its record_result':>20}")
    print(f"{'nothing (every default breaker)':<34} {full[0]:>18,} {full[1]:>20,}")
    for off in TURNED_OFF:
        row = [per_call(f"reporting_{half}-without:{off}") for half in ("check", "result")]
        cells = [f"{n:,} ({n - whole:+,})" for n, whole in zip(row, full, strict=True)]
        print(f"{off:<34} {cells[0]:>18} {cells[1]:>20}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("rows", nargs="*", help=f"rows to count, of {', '.join(ROWS)} (default: all)")
    parser.add_argument("--breakers", action="store_true", help="each breaker's cost on a reporting host")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.child:
        child(options.child[0], int(options.child[1]))
        return
    if options.breakers:
        breaker_costs()
        return
    rows = options.rows or list(ROWS)
    unknown = set(rows) - set(ROWS)
    if unknown:
        parser.error(f"unknown rows: {', '.join(sorted(unknown))}")
    if importlib.util.find_spec("agent_watchdog") is None and "watchdog" in rows:
        rows.remove("watchdog")
        print("agent-watchdog not installed: its row is skipped")
    base = per_call("floor")
    print(f"{'per call':<50} {'instructions':>12} {'/ floor':>8}")
    for row in rows:
        count = base if row == "floor" else per_call(row)
        print(f"{ROWS[row]:<50} {count:>12,} {count / base:>7.2f}x")


if __name__ == "__main__":
    main()
