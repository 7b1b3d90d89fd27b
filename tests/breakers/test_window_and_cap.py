"""The window breaker and the call cap on a state built directly (see conftest.make_state)."""

from __future__ import annotations

from loopfuse._calls import CallKey
from loopfuse._state import AgentState, ToolResult
from loopfuse._volatile import pair_key
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


def _ran(
    breaker: WindowBreaker, state: AgentState, key: CallKey, digest: int, ok: bool | None = True
) -> bool:
    """Whether the call was allowed; if so, its result (``digest``) observed as the store does."""
    if decide(breaker, state, key) is not None:
        return False
    state.results.index = state.window.pushed - 1
    breaker.observe(state, key, ToolResult(digest, ok, digest if ok is False else 0))
    state.results.settled(key.key, digest)
    return True


def test_a_successful_rerun_after_an_edit_is_not_counted() -> None:
    breaker, state = WindowBreaker(2, result_aware=True, result_limit=2), make_state(window=50)
    test = call("bash", {"command": "pytest"})
    for i in range(20):
        assert _ran(breaker, state, call("edit", {"n": i}), 1000 + i)  # an edit new to the window
        assert _ran(breaker, state, test, 7)
    assert state.window.count(pair_key(test.key, 7)) == 1  # its first run only


def test_a_rerun_counts_when_nothing_new_came_since_or_when_it_failed() -> None:
    breaker, state = WindowBreaker(2, result_aware=True, result_limit=2), make_state(window=50)
    test, failing = call("bash", {"command": "pytest"}), call("bash", {"command": "make"})
    assert [_ran(breaker, state, test, 7) for _ in range(3)] == [True, True, False]
    verdicts = []
    for i in range(3):
        assert _ran(breaker, state, call("edit", {"n": i}), 1000 + i)
        verdicts.append(_ran(breaker, state, failing, 9, ok=False))
    assert verdicts == [True, True, False]
