"""loopfuse beside the loop guards on PyPI, on the same stream of calls, in one run.

Every guard sees the same 5,000 distinct calls of about 60 bytes on one agent (no
guard denies any of them; loopfuse's cap is lifted, since no peer has one). Printed:
the median and p99 time per call, and each figure as a ratio to loopfuse and to the
floor (``json.dumps(sort_keys=True)`` + ``hashlib.sha256``, what any guard that treats
reordered arguments as the same call must at least do). Then loopfuse with results
reported (``check`` + ``record_result``, a ~200-byte result that differs per call). Rounds interleave the guards so machine noise
hits them alike. Peers not installed are listed as such:

    pip install agent-watchdog loopguard agent-budget-guard-py agent-loop-guard
    python bench/peers.py [--calls N] [--rounds R]
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import statistics
import time
from collections.abc import Callable, Iterator
from typing import Any

from loopfuse import Guard

Call = Callable[[str, dict[str, Any]], object]
_OPEN: list[contextlib.AbstractContextManager[object]] = []


def result_of(args: dict[str, Any]) -> str:
    """A result of about 200 bytes that differs per call, as a healthy search's does (one
    result for every call would be a loop, and the near-duplicate breaker would deny it)."""
    return f"10 results for {args['query']!r}; first: https://example.com/a1b2c3, " + "lorem ipsum " * 12


def stream(n: int) -> list[dict[str, Any]]:
    return [{"query": f"search number {i}", "limit": 10, "opts": {"b": 1, "a": i}} for i in range(n)]


def floor() -> Call:
    def call(tool: str, args: dict[str, Any]) -> object:
        return hashlib.sha256(json.dumps([tool, args], sort_keys=True).encode()).digest()

    return call


def loopfuse_check() -> Call:
    guard = Guard.from_config({"circuit_breaker": {"max_calls_per_agent": 0}})
    return lambda tool, args: guard.check(tool, args, "agent")


def loopfuse_with_result() -> Call:
    guard = Guard.from_config({"circuit_breaker": {"max_calls_per_agent": 0}})

    def call(tool: str, args: dict[str, Any]) -> object:
        decision = guard.check(tool, args, "agent")
        if not decision.allowed:
            raise AssertionError(f"loopfuse denied a healthy call: {decision.message}")
        guard.record_result(tool, args, result_of(args), "agent", ok=True)
        return decision

    return call


def agent_watchdog() -> Call:
    from agent_watchdog import AgentWatchdog

    dog = AgentWatchdog(max_identical_calls=3, timeout_seconds=None)
    _OPEN.append(dog.watch(run_id="agent"))
    _OPEN[-1].__enter__()  # kept open (and referenced) for the whole run
    return lambda tool, args: dog.record_tool_call(tool, args)


def loopguard() -> Call:
    from loopguard import loopguard as decorate

    @decorate(max_repeats=3, window=3600)
    def tool_call(tool: str, **args: Any) -> None:
        return None

    return lambda tool, args: tool_call(tool, **args)


def agent_loop_guard() -> Call:
    from loop_guard import LoopGuard

    guard = LoopGuard()
    return lambda tool, args: guard.check(tool, args)


def agent_budget_guard() -> Call:
    from agentguard import Guard as BudgetGuard

    guard = BudgetGuard(use_config=False, use_snapshot=False)

    def call(tool: str, args: dict[str, Any]) -> object:
        with guard.tool(tool, args) as signature:
            return signature

    return call


def one_function() -> Call:
    from one_function import one_function_check

    return one_function_check()


PEERS: dict[str, Callable[[], Call]] = {
    "floor: json.dumps(sort_keys) + sha256": floor,
    "one function (bench/one_function.py)": one_function,
    "loopfuse check": loopfuse_check,
    "loopfuse check + record_result": loopfuse_with_result,
    "agent-watchdog": agent_watchdog,
    "loopguard": loopguard,
    "agent-loop-guard": agent_loop_guard,
    "agent-budget-guard-py (agentguard)": agent_budget_guard,
}


def build() -> tuple[dict[str, Call], list[str]]:
    ready: dict[str, Call] = {}
    missing: list[str] = []
    for name, make in PEERS.items():
        try:
            ready[name] = make()
        except ImportError:
            missing.append(name)
    return ready, missing


def timed(call: Call, part: list[dict[str, Any]]) -> Iterator[float]:
    clock = time.perf_counter_ns
    for args in part:
        start = clock()
        call("search", args)
        yield (clock() - start) / 1000


def measure(calls: dict[str, Call], inputs: list[dict[str, Any]], rounds: int) -> dict[str, list[float]]:
    samples: dict[str, list[float]] = {name: [] for name in calls}
    chunk = max(1, len(inputs) // rounds)
    for start in range(0, len(inputs), chunk):
        part = inputs[start : start + chunk]
        for name, call in calls.items():
            try:
                samples[name].extend(timed(call, part))
            except AssertionError:
                raise
            except Exception:  # a peer that halts is timed no further
                continue
    return samples


def report(samples: dict[str, list[float]], missing: list[str]) -> None:
    medians = {name: statistics.median(s) for name, s in samples.items() if s}
    base, ours = medians["floor: json.dumps(sort_keys) + sha256"], medians["loopfuse check"]
    print(f"{'guard':<38} {'median us':>10} {'p99 us':>9} {'/ loopfuse':>11} {'/ floor':>8}")
    for name, median in sorted(medians.items(), key=lambda item: item[1]):
        p99 = sorted(samples[name])[int(len(samples[name]) * 0.99) - 1]
        print(f"{name:<38} {median:>10.2f} {p99:>9.2f} {median / ours:>10.2f}x {median / base:>7.2f}x")
    for name in missing:
        print(f"{name:<38} not installed")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=10)
    options = parser.parse_args()
    calls, missing = build()
    report(measure(calls, stream(options.calls), options.rounds), missing)


if __name__ == "__main__":
    main()
