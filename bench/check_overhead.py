"""How much a guard check costs, next to the alternatives, in one run.

Prints median and p99 time per ``Guard.check`` for small (~100 B), 10 KB and 1 MB
arguments beside (a) ``json.dumps(sort_keys=True)`` + ``hashlib.sha256`` of the same
arguments; check + ``record_result`` beside check alone for results of 200 B to 4 KB, and a
reporting host's ``record_result`` beside the check before it; the
time per check for an agent with 10 and with 100,000 prior calls beside (b) a naive guard
that rescans the whole history; memory per agent at window 200; and 100,000 agents.
Ratios are what to read: this machine is shared and noisy.

    python bench/check_overhead.py [--quick]
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import hashlib
import json
import statistics
import time
import tracemalloc
from collections.abc import Callable
from typing import Any

from loopfuse import Guard, GuardConfig
from loopfuse.config import CircuitBreakerConfig, GuardSettings, LoopBrakeConfig, parse_config


def timings(fn: Callable[[Any], object], inputs: list[Any]) -> list[float]:
    out = []
    clock = time.perf_counter_ns
    for item in inputs:
        start = clock()
        fn(item)
        out.append((clock() - start) / 1000)
    return out


def summary(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered), ordered[int(len(ordered) * 0.99) - 1]


def baseline(args: Any) -> bytes:
    return hashlib.sha256(json.dumps(args, sort_keys=True).encode()).digest()


def make_args(size: int, n: int) -> list[dict[str, Any]]:
    filler = "x" * max(0, size - 60)
    return [
        {"query": f"search number {i}", "limit": 10, "body": filler, "opts": {"b": 1, "a": i}}
        for i in range(n)
    ]


def unlimited_guard(**brake: Any) -> Guard:
    """Issue-2 breakers only (window, brake), no cap so that every timed call is allowed."""
    cb = CircuitBreakerConfig(max_calls_per_agent=0)
    off = {
        "cycle": {"enabled": False},
        "near_duplicate": {"enabled": False},
        "same_error": {"enabled": False},
    }
    config = parse_config(off)
    return Guard(
        dataclasses.replace(
            config, circuit_breaker=cb, loop_brake=LoopBrakeConfig(**brake) if brake else None
        )
    )


def default_guard() -> Guard:
    """``Guard()``'s defaults, every breaker on, with the cap lifted so timed calls are allowed
    (and ``failures``' limit out of reach: the failed rows report every call as a failure)."""
    return Guard.from_config({"circuit_breaker": {"max_calls_per_agent": 0}, "failures": {"limit": 10**6}})


def checks(guard: Guard) -> Callable[[Any], object]:
    """A check of the arguments, as a host does before each call."""
    return lambda args: guard.check("search", args, "agent")


def with_results(guard: Guard) -> Callable[[Any], object]:
    """A check followed by ``record_result``, as the adapters do after each call; each call
    returns its own result, as distinct searches do (so none is denied)."""

    def call(args: Any) -> object:
        decision = guard.check("search", args, "agent")
        result = f"{args['opts']['a']} results, first: https://example.com/a1b2c3"
        guard.record_result("search", args, result, "agent", ok=True)
        return decision

    return call


def word(i: int) -> str:
    """``i`` spelled in letters: text that differs from call to call in more than its numbers,
    so that no result reads as the same error again (a denied call would time the denial path)."""
    return "".join(chr(ord("g") + int(d)) for d in str(i))


def listing(i: int, size: int) -> str:
    """A file window as an editor tool prints it: numbered lines, numbers on most of them."""
    lines = [f"[File: /repo/pkg/{word(i)}.py (812 lines total)]"]
    for k in range(1, size // 40 + 2):
        lines.append(f"{100 + k}:        value_{k} = compute(item, {k * 7}, limit={i % 50})")
    return "\n".join(lines)[:size]


def prose(i: int, size: int) -> str:
    """Text without a digit but one: a search summary, a page of documentation."""
    sentence = "the guard decides in code and never asks the model what it thinks of the call "
    return (f"result {word(i)}: " + sentence * (size // len(sentence) + 1))[:size]


def test_run(i: int, size: int) -> str:
    """A test runner's report past ASCII, as jest and vitest print it: a check mark, a count
    and how long each test took."""
    lines = [f"PASS src/{word(i)}.test.ts"]
    for k in range(1, size // 36 + 2):
        lines.append(f"  \u2713 case {k} returns {k * 3} ({k % 9 + 1} ms)")
    return "\n".join(lines)[:size]


RESULT_SHAPES: dict[str, tuple[Callable[[int, int], str], bool | None]] = {
    "file window": (listing, True),
    "file window, failed": (listing, False),
    "prose": (prose, None),
    "tests, past ASCII": (test_run, True),
}


def bench_results(quick: bool) -> None:
    print("== record_result by result size: check + record_result vs check alone (target <= 3x)")
    n = 600 if quick else 4000
    for size in (200, 1_000, 4_000):
        for name, (make, ok) in RESULT_SHAPES.items():
            inputs = [({"query": f"q {i}", "page": i}, make(i, size)) for i in range(n)]
            checking, reporting = default_guard(), default_guard()

            def check(item: Any, g: Guard = checking) -> object:
                return g.check("search", item[0], "agent")

            def report(item: Any, g: Guard = reporting, ok: bool | None = ok) -> object:
                decision = g.check("search", item[0], "agent")
                if not decision.allowed:
                    raise SystemExit(f"denied ({decision.rule}): this row would time the denial path")
                g.record_result("search", item[0], item[1], "agent", ok=ok)
                return decision

            ours, theirs = interleaved(report, check, inputs, 10)
            row(f"{size:>5} B result, {name}", ours, theirs, "check")
    bench_result_share(quick)


def bench_result_share(quick: bool) -> None:
    """The two halves of a tool call in a host that reports results, timed apart: its check
    (every breaker asked, the near-duplicate key computed) and its ``record_result``."""
    print("== a reporting host's tool call: record_result vs the check before it (target <= 2x)")
    n = 600 if quick else 4000
    for size in (200, 1_000, 4_000):
        for name, (make, ok) in RESULT_SHAPES.items():
            guard, clock = default_guard(), time.perf_counter_ns
            checks, reports = [], []
            for i in range(n):
                args, result = {"query": f"q {i}", "page": i}, make(i, size)
                start = clock()
                guard.check("search", args, "agent")
                middle = clock()
                guard.record_result("search", args, result, "agent", ok=ok)
                checks.append((middle - start) / 1000)
                reports.append((clock() - middle) / 1000)
            row(f"{size:>5} B result, {name}", summary(reports), summary(checks), "its check")


def row(label: str, ours: tuple[float, float], theirs: tuple[float, float], name: str) -> None:
    print(
        f"{label:<34} median {ours[0]:9.2f} us  p99 {ours[1]:9.2f} us   {name} median {theirs[0]:9.2f} us"
        f"   ratio {ours[0] / theirs[0]:5.2f}x"
    )


def interleaved(
    guard_fn: Callable[[Any], object], base_fn: Callable[[Any], object], inputs: list[Any], rounds: int
) -> tuple[tuple[float, float], tuple[float, float]]:
    """Alternate both sides in chunks so machine noise hits them alike."""
    ours: list[float] = []
    theirs: list[float] = []
    chunk = max(1, len(inputs) // rounds)
    for start in range(0, len(inputs), chunk):
        part = inputs[start : start + chunk]
        theirs += timings(base_fn, part)
        ours += timings(guard_fn, part)
    return summary(ours), summary(theirs)


def bench_sizes(quick: bool) -> None:
    print("== argument size: Guard.check vs (a) json.dumps(sort_keys=True) + sha256")
    for label, size, n in (
        ("~100 B arguments", 100, 20000),
        ("10 KB arguments", 10_000, 4000),
        ("1 MB arguments", 1_000_000, 60),
    ):
        n = max(20, n // 5) if quick else n
        inputs = make_args(size, n)
        for config_label, guard in (
            ("window", unlimited_guard()),
            ("window+brake", unlimited_guard(max_repeats=3)),
            ("full default", default_guard()),
        ):
            ours, theirs = interleaved(checks(guard), baseline, inputs, 10)
            row(f"{label}, {config_label}", ours, theirs, "(a)")
        ours, theirs = interleaved(with_results(default_guard()), baseline, inputs, 10)
        row(f"{label}, default check+result", ours, theirs, "(a)")


class NaiveGuard:
    """Keeps every call and rescans the whole history on each check."""

    def __init__(self, window: int, limit: int) -> None:
        self.history: list[bytes] = []
        self.window, self.limit = window, limit

    def check(self, args: Any) -> bool:
        key = baseline(args)
        start = len(self.history) - self.window
        seen = sum(1 for i, k in enumerate(self.history) if k == key and i >= start)
        if seen >= self.limit:
            return False
        self.history.append(key)
        return True


def bench_history(quick: bool) -> None:
    print("== history length: time per check after N prior calls")
    n = 2000 if quick else 10000
    results = {}
    for prior in (10, 100_000):
        guard, naive = unlimited_guard(), NaiveGuard(200, 6)
        warm = make_args(100, prior)
        for args in warm:
            guard.check("search", args, "agent")
        naive.history = [baseline(a) for a in warm]
        inputs = [{"query": f"after {i}", "limit": 10} for i in range(n)]
        ours = summary(timings(checks(guard), inputs))
        theirs = summary(timings(naive.check, inputs[: max(20, n // 100)]))
        results[prior] = ours
        row(f"{prior:>7} prior calls", ours, theirs, "(b) naive")
    print(
        f"{'100,000 vs 10 prior calls':<34} ratio {results[100_000][0] / results[10][0]:5.2f}x (target <= 1.2x)"
    )


def memory_per_agent(guard: Guard, agents: int, results: bool) -> float:
    """Bytes per agent, after one agent has warmed what the process makes once (compiled
    patterns, caches of the last calls), which no agent's share holds."""
    for i in range(400):
        guard.check("search", {"query": f"q{i}"}, "warm-up")
        if results:
            guard.record_result("search", {"query": f"q{i}"}, f"result {i}", "warm-up", ok=True)
    guard.forget("warm-up")
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.take_snapshot()
    for a in range(agents):
        for i in range(400):
            guard.check("search", {"query": f"q{i}"}, f"agent-{a}")
            if results:
                guard.record_result("search", {"query": f"q{i}"}, f"result {i}", f"agent-{a}", ok=True)
    after = tracemalloc.take_snapshot()
    tracemalloc.stop()
    return sum(s.size_diff for s in after.compare_to(before, "filename")) / agents / 1024


def bench_memory(quick: bool) -> None:
    print("== memory per agent, window 200 full of distinct calls (target <= 16 KiB)")
    agents = 100 if quick else 500
    for label, guard, results in (
        ("issue-2 breakers + brake", unlimited_guard(max_repeats=3), False),
        ("full default, no results", default_guard(), False),
        ("full default, results reported", default_guard(), True),
    ):
        print(f"{label:<34} {memory_per_agent(guard, agents, results):9.2f} KiB")
    bench_many_agents(quick)


def bench_many_agents(quick: bool) -> None:
    count = 20_000 if quick else 100_000
    guard = Guard(GuardConfig(guard=GuardSettings(max_agents=count)))
    gc.collect()
    tracemalloc.start()
    start = time.perf_counter()
    for a in range(count):
        guard.check("search", {"query": "hello"}, f"agent-{a}")
    elapsed = time.perf_counter() - start
    current, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    probe = summary(
        timings(
            lambda a: guard.check("search", {"query": "again"}, f"agent-{a}"),
            list(range(0, count, count // 2000)),
        )
    )
    print(
        f"{count:,} agents, one call each: {elapsed / count * 1e6:.2f} us/check while tracing memory, "
        f"{current / count:.0f} B per agent, check with all tracked: median {probe[0]:.2f} us, "
        f"stats agents={guard.stats()['agents']}"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="fewer samples (a smoke run)")
    quick = parser.parse_args().quick
    bench_sizes(quick)
    bench_results(quick)
    bench_history(quick)
    bench_memory(quick)


if __name__ == "__main__":
    main()
