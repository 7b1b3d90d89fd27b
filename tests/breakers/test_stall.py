"""The stall breaker as a pure function of one agent's state (no guard, no store)."""

from __future__ import annotations

import pytest

from loopfuse._calls import CallKey
from loopfuse._state import AgentState, ToolResult
from loopfuse.breakers.stall import StallBreaker


def call(n: int, tool: str = "edit") -> CallKey:
    return CallKey(tool, b"%d" % n, n)


def failure(error: int) -> ToolResult:
    return ToolResult(digest=error * 7919, ok=False, error=error)


def success(digest: int) -> ToolResult:
    return ToolResult(digest=digest, ok=True, error=0)


def state_after(breaker: StallBreaker, steps: list[tuple[CallKey, ToolResult]]) -> AgentState:
    """An agent's state once ``steps`` ran and reported their results."""
    state = AgentState(200)
    for key, result in steps:
        state.calls += 1  # allowed, as a store does before the call runs
        breaker.observe(state, key, result)
    return state


def test_identical_failures_deny_the_attempt_after_error_limit() -> None:
    breaker = StallBreaker(limit=8, error_limit=4)
    assert breaker.check(state_after(breaker, [(call(1), failure(5))] * 3), call(1)) is None
    denial = breaker.check(state_after(breaker, [(call(1), failure(5))] * 4), call(1))
    assert denial is not None
    assert (denial.kind, denial.count, denial.limit, denial.rule) == ("stall", 4, 4, "stall.error_limit")


def test_a_no_op_step_between_attempts_does_not_reset_the_count() -> None:
    """The no-op's result is new only the first time: it costs one attempt, no more."""
    breaker = StallBreaker(limit=8, error_limit=4)
    think = (call(9, "list_dir"), success(42))
    steps = [(call(1), failure(5)), think] * 4
    assert breaker.check(state_after(breaker, steps), call(1)) is None
    denial = breaker.check(state_after(breaker, [*steps, (call(1), failure(5))]), call(1))
    assert denial is not None and denial.count == 4


def test_a_thought_between_attempts_is_never_new() -> None:
    """A thinking tool's answer is the model's own note: not even the first one starts the
    count again (the sequential-thinking server's answer, counting thoughts, was new each time)."""
    breaker = StallBreaker(limit=8, error_limit=4)
    for tool in ("think", "sequentialthinking", "mcp__sequential-thinking__sequentialthinking"):
        steps = [s for n in range(4) for s in ((call(1), failure(5)), (call(9 + n, tool), success(42 + n)))]
        denial = breaker.check(state_after(breaker, steps), call(1))
        assert denial is not None and denial.count == 4


def test_a_trivial_variant_failing_the_same_way_does_not_reset_the_count() -> None:
    breaker = StallBreaker(limit=8, error_limit=4)
    steps = [(call(1), failure(5)), (call(2), failure(5))] * 4
    assert breaker.check(state_after(breaker, steps), call(1)) is not None


def test_a_new_result_between_attempts_starts_the_count_again() -> None:
    breaker = StallBreaker(limit=8, error_limit=4)
    steps = [(call(1), failure(5)), (call(1), failure(5)), (call(1), failure(5)), (call(3), success(77))]
    state = state_after(breaker, [*steps, (call(1), failure(5))])
    assert breaker.check(state, call(1)) is None


def test_rerunning_a_failing_test_after_each_different_edit_is_never_denied() -> None:
    breaker = StallBreaker(limit=2, error_limit=2)
    steps = [s for i in range(20) for s in ((call(100 + i), success(1000 + i)), (call(1), failure(5)))]
    assert breaker.check(state_after(breaker, steps), call(1)) is None


@pytest.mark.parametrize(("checked", "rule"), [(1, "stall.limit"), (2, "stall.after_limit")])
def test_successes_use_limit_and_its_rules(checked: int, rule: str) -> None:
    """The identical call, and the call right after the streak whatever it is."""
    breaker = StallBreaker(limit=3, error_limit=0, tool_error_limit=0)
    denial = breaker.check(state_after(breaker, [(call(1), success(9))] * 3), call(checked))
    assert denial is not None
    assert (denial.count, denial.limit, denial.rule) == (3, 3, rule)
    assert breaker.check(state_after(breaker, [(call(1), failure(9))] * 9), call(checked)) is None  # 0: off


def test_a_call_without_a_reported_result_is_never_denied() -> None:
    breaker = StallBreaker(limit=1, error_limit=1)
    assert breaker.check(AgentState(200), call(1)) is None
    state = state_after(breaker, [(call(2), failure(5))] * 5)
    state.calls += 1  # another call was made since the last result
    assert breaker.check(state, call(1, "open")) is None


def test_the_result_completing_a_streak_refuses_the_next_call_whatever_it_is() -> None:
    breaker = StallBreaker(limit=8, error_limit=4)
    steps = [(call(1), failure(5))] * 4
    assert breaker.check(state_after(breaker, steps[:3]), call(2)) is None
    denial = breaker.check(state_after(breaker, steps), call(2))
    assert denial is not None
    assert (denial.count, denial.limit, denial.rule) == (4, 4, "stall.after_error_limit")


def test_the_identical_call_after_a_streak_keeps_its_own_rule() -> None:
    breaker = StallBreaker(limit=8, error_limit=4)
    denial = breaker.check(state_after(breaker, [(call(1), failure(5))] * 4), call(1))
    assert denial is not None and denial.rule == "stall.error_limit"


def test_only_the_first_call_after_a_streak_is_refused() -> None:
    """Once a call was refused (by any breaker) or made, other calls are judged as usual."""
    breaker = StallBreaker(limit=8, error_limit=4)
    state = state_after(breaker, [(call(1), failure(5))] * 4)
    state.denials_in_row += 1
    assert breaker.check(state, call(2)) is None
    assert breaker.check(state, call(1)) is not None  # the identical call stays refused


def test_a_new_result_completes_no_streak() -> None:
    breaker = StallBreaker(limit=8, error_limit=4)
    steps = [(call(1), failure(5))] * 4 + [(call(3), success(77))]
    assert breaker.check(state_after(breaker, steps), call(2)) is None


def test_memory_stays_bounded_by_window() -> None:
    breaker = StallBreaker(limit=4, error_limit=4, window=16)
    state = state_after(breaker, [(call(i), success(i)) for i in range(1, 5000)])
    mine = state.units["stall"] if state.units else None
    assert mine is not None
    assert max(len(mine.seen), len(mine.last), len(mine.pairs)) <= 16


def test_a_tool_failing_the_same_way_with_other_arguments_is_denied_at_tool_error_limit() -> None:
    breaker = StallBreaker(limit=8, error_limit=4, tool_error_limit=5)
    steps = [(call(n, "lookup"), failure(5)) for n in range(5)]
    assert breaker.check(state_after(breaker, steps[:4]), call(99, "lookup")) is None
    denial = breaker.check(state_after(breaker, steps), call(99, "lookup"))
    assert denial is not None
    assert (denial.count, denial.limit, denial.rule) == (5, 5, "stall.tool_error_limit")


def test_another_tool_or_another_error_is_not_the_tools_streak() -> None:
    breaker = StallBreaker(limit=8, error_limit=4, tool_error_limit=3)
    state = state_after(breaker, [(call(n, "lookup"), failure(5)) for n in range(3)])
    state.denials_in_row += 1  # the call right after is past: only the tool rule is left
    assert breaker.check(state, call(99, "search")) is None
    mixed = [(call(n, "lookup"), failure(5 + n % 2)) for n in range(4)]
    assert breaker.check(state_after(breaker, mixed), call(99, "lookup")) is None


def test_a_batch_tools_items_failing_alike_add_up_to_nothing() -> None:
    breaker = StallBreaker(limit=8, error_limit=4, tool_error_limit=2, batch_tools=["fetch"])
    state = state_after(breaker, [(call(n, "fetch"), failure(5)) for n in range(6)])
    state.calls += 1
    assert breaker.check(state, call(99, "fetch")) is None


def near_call(n: int, near: int) -> CallKey:
    """Call ``n`` whose near-duplicate key is ``near`` (equal for calls that differ in numbers only)."""
    key = call(n)
    key.near_of = lambda _: near
    return key


def test_calls_sharing_a_near_key_add_up_their_identical_failures() -> None:
    breaker = StallBreaker(limit=8, error_limit=4)
    steps = [(near_call(n, 500), failure(5)) for n in range(1, 5)]
    assert breaker.check(state_after(breaker, steps[:3]), near_call(6, 500)) is None
    denial = breaker.check(state_after(breaker, steps), near_call(6, 500))
    assert denial is not None
    assert (denial.count, denial.limit, denial.rule) == (4, 4, "stall.similar_error_limit")
    assert breaker.check(state_after(breaker, steps), near_call(6, 501)) is not None  # the refusal after it


def test_near_keys_count_by_the_whole_error_so_errors_naming_their_item_stay_apart() -> None:
    """ToolResult.error masks numbers ("order # not found"); the digest keeps them."""
    breaker = StallBreaker(limit=8, error_limit=4)
    steps = [(near_call(n, 500), ToolResult(digest=n, ok=False, error=5)) for n in range(1, 5)]
    assert breaker.check(state_after(breaker, steps), near_call(6, 500)) is None
