"""The window breaker and the call cap on a state built directly (see conftest.make_state)."""

from __future__ import annotations

from loopfuse.breakers import CallCap, WindowBreaker
from loopfuse.decision import Denial

from .conftest import call, decide, make_state


def test_the_cap_denies_once_the_state_holds_limit_calls() -> None:
    key = call("search", {"q": "x"})
    assert CallCap(3).check(make_state(calls=2), key) is None
    assert CallCap(3).check(make_state(calls=3), key) == Denial(
        "cap", 3, 3, "circuit_breaker.max_calls_per_agent"
    )
    assert CallCap(0).check(make_state(calls=10_000), key) is None


def test_the_window_breaker_denies_the_call_past_its_limit_and_never_counts_the_denial() -> None:
    breaker, state, key = WindowBreaker(2), make_state(window=10), call("search", {"q": "x"})
    verdicts = [decide(breaker, state, key) for _ in range(4)]
    denial = Denial("duplicate", 2, 2, "circuit_breaker.duplicate_limit")
    assert verdicts == [None, None, denial, denial]
    assert (state.calls, state.window.count(key.key)) == (2, 2)


def test_old_calls_leave_the_window() -> None:
    breaker, state = WindowBreaker(1), make_state(window=2)
    verdicts = [decide(breaker, state, call("read", {"path": p})) for p in "abca"]
    assert verdicts == [None, None, None, None]  # "a" left the window of 2 before it came back
    assert decide(breaker, state, call("read", {"path": "a"})) == Denial(
        "duplicate", 1, 1, "circuit_breaker.duplicate_limit"
    )
