"""The failures breaker as a pure function of one agent's state (no guard, no store)."""

from __future__ import annotations

from loopfuse._calls import CallKey
from loopfuse._state import AgentState, ToolResult
from loopfuse.breakers.failures import FailuresBreaker, FailuresState


def call(n: int) -> CallKey:
    return CallKey(f"tool{n % 3}", b"%d" % n, n)


def failure(n: int) -> ToolResult:
    return ToolResult(digest=n * 7919, ok=False, error=n)


def outcome(n: int, ok: bool | None) -> ToolResult:
    return ToolResult(digest=n * 7919, ok=ok, error=0)


def state_after(breaker: FailuresBreaker, results: list[ToolResult]) -> AgentState:
    """An agent's state once one allowed call per result ran and reported it."""
    state = AgentState(200)
    for n, result in enumerate(results):
        state.calls += 1  # allowed, as a store does before the call runs
        state.denials_in_row = 0
        breaker.observe(state, call(n), result)
    return state


def test_the_call_after_limit_different_failures_in_a_row_is_denied() -> None:
    breaker = FailuresBreaker(limit=5)
    assert breaker.check(state_after(breaker, [failure(n) for n in range(4)]), call(99)) is None
    denial = breaker.check(state_after(breaker, [failure(n) for n in range(5)]), call(99))
    assert denial is not None
    assert (denial.kind, denial.count, denial.limit, denial.rule) == ("failures", 5, 5, "failures.limit")


def test_a_success_or_an_unknown_outcome_ends_the_run() -> None:
    breaker = FailuresBreaker(limit=3)
    for ok in (True, None):
        results = [failure(1), failure(2), outcome(3, ok), failure(4), failure(5)]
        assert breaker.check(state_after(breaker, results), call(9)) is None


def test_after_a_refusal_one_trial_call_runs() -> None:
    breaker = FailuresBreaker(limit=3)
    state = state_after(breaker, [failure(n) for n in range(3)])
    assert breaker.check(state, call(7)) is not None
    state.denials_in_row += 1  # the guard refused it
    assert breaker.check(state, call(8)) is None  # the trial
    state.calls, state.denials_in_row = state.calls + 1, 0
    breaker.observe(state, call(8), failure(8))
    denial = breaker.check(state, call(9))
    assert denial is not None and denial.count == 4


def refused_then_trial_fails(breaker: FailuresBreaker, state: AgentState, n: int) -> None:
    """A call refused, then the trial call after it allowed, run, failed."""
    assert breaker.check(state, call(n)) is not None
    state.denials_in_row += 1
    assert breaker.check(state, call(n + 1)) is None
    state.calls, state.denials_in_row = state.calls + 1, 0
    breaker.observe(state, call(n + 1), failure(n + 1))


def test_once_its_trial_calls_failed_every_call_is_refused() -> None:
    breaker = FailuresBreaker(limit=3, trials=2)
    state = state_after(breaker, [failure(n) for n in range(3)])
    refused_then_trial_fails(breaker, state, 10)
    refused_then_trial_fails(breaker, state, 20)
    for n in range(30, 33):
        denial = breaker.check(state, call(n))
        assert denial is not None and denial.count == 5
        state.denials_in_row += 1


def test_without_trials_every_call_after_the_limit_is_refused() -> None:
    breaker = FailuresBreaker(limit=3, trials=0)
    state = state_after(breaker, [failure(n) for n in range(3)])
    for n in range(10, 13):
        assert breaker.check(state, call(n)) is not None
        state.denials_in_row += 1


def test_a_success_after_failed_trials_closes_it() -> None:
    breaker = FailuresBreaker(limit=3, trials=1)
    state = state_after(breaker, [failure(n) for n in range(3)])
    refused_then_trial_fails(breaker, state, 10)
    breaker.observe(state, call(12), outcome(12, True))
    assert breaker.check(state, call(13)) is None
    for n in range(14, 17):
        breaker.observe(state, call(n), failure(n))
    state.denials_in_row += 1  # a call was refused since: the first trial of the new run
    assert breaker.check(state, call(17)) is None


def test_a_refused_call_changes_nothing() -> None:
    breaker = FailuresBreaker(limit=3)
    state = state_after(breaker, [failure(n) for n in range(3)])
    mine = state.unit("failures", FailuresState)
    before = (mine.streak, mine.trials, mine.at)
    breaker.refused(state, call(7))
    breaker.record(state, call(7))
    assert (mine.streak, mine.trials, mine.at) == before


def test_no_results_no_state() -> None:
    breaker = FailuresBreaker(limit=1)
    assert breaker.check(AgentState(200), call(1)) is None
