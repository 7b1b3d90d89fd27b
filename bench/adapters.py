"""Per host: time per tool call of a scripted run with and without the guard, and their ratio.

Each module in bench/adapter_hosts/ exposes ``HOST`` (a name) and
``run(guarded: bool, calls: int) -> None``, which performs a scripted run of the host's
real framework making ``calls`` tool calls, all distinct with distinct results (so the
guard allows them all: distinct calls that all returned the same result would be a loop).
A host whose extra is not installed is reported and skipped.

    python bench/adapters.py [--calls 200] [--repeats 5]
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))


def time_per_call(run: object, guarded: bool, calls: int, repeats: int) -> float:
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        run(guarded, calls)  # type: ignore[operator]
        samples.append((time.perf_counter() - start) / calls)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=5)
    opts = parser.parse_args()
    import adapter_hosts

    print(f"{'host':<20} {'without (us/call)':>18} {'with (us/call)':>15} {'ratio':>7}")
    for info in sorted(pkgutil.iter_modules(adapter_hosts.__path__), key=lambda m: m.name):
        try:
            module = importlib.import_module(f"adapter_hosts.{info.name}")
        except ImportError as exc:
            print(f"{info.name:<20} skipped: {exc}")
            continue
        module.run(False, 5)
        module.run(True, 5)
        bare = time_per_call(module.run, False, opts.calls, opts.repeats)
        guarded = time_per_call(module.run, True, opts.calls, opts.repeats)
        print(f"{module.HOST:<20} {bare * 1e6:>18.1f} {guarded * 1e6:>15.1f} {guarded / bare:>7.2f}")


if __name__ == "__main__":
    main()
