"""near_duplicate's progress_limit as a pure function of one agent's state (no guard, no store)."""

from __future__ import annotations

from loopfuse._calls import CallKey
from loopfuse._state import AgentState
from loopfuse.breakers.near_duplicate import NearDuplicateBreaker


def call(n: int, near: int) -> CallKey:
    """Call ``n`` whose near-duplicate key is ``near`` (0: none, as for arguments over 2 KiB)."""
    key = CallKey("view", b"%d" % n, n)
    key.near_of = lambda _: near
    return key


def state_after(breaker: NearDuplicateBreaker, calls: list[CallKey]) -> AgentState:
    state = AgentState(200)
    for key in calls:
        breaker.record(state, key)
    return state


BREAKER = NearDuplicateBreaker(8, 50, progress_limit=4)


def test_the_call_after_progress_limit_calls_with_its_near_key_in_a_row_is_denied() -> None:
    state = state_after(BREAKER, [call(n, 77) for n in range(4)])
    denial = BREAKER.check(state, call(9, 77))
    assert denial is not None and (denial.count, denial.limit, denial.rule) == (
        4,
        4,
        "near_duplicate.progress_limit",
    )
    assert BREAKER.check(state, call(9, 78)) is None  # another near key: not in the run


def test_a_call_with_another_near_key_or_none_ends_the_run() -> None:
    for breaking in (call(5, 78), call(5, 0)):
        state = state_after(BREAKER, [call(1, 77), call(2, 77), call(3, 77), breaking, call(6, 77)])
        assert BREAKER.check(state, call(9, 77)) is None


def test_progress_limit_0_is_off() -> None:
    breaker = NearDuplicateBreaker(100, 100, progress_limit=0)  # the window's limit out of reach
    assert breaker.check(state_after(breaker, [call(n, 77) for n in range(40)]), call(99, 77)) is None
