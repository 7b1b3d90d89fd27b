"""Plain functions: a loop calling a function directly or through Guard.wrap."""

from __future__ import annotations

from loopfuse import Guard

HOST = "plain"


def search(q: str) -> str:
    return f"result for {q}"


def run(guarded: bool, calls: int) -> None:
    fn = (
        Guard.from_config({"circuit_breaker": {"max_calls_per_agent": 0}}).wrap(search) if guarded else search
    )
    for n in range(calls):
        fn(str(n))
