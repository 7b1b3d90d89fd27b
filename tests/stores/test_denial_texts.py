"""Each rule's denial names its configuration key and the configured value, on every store."""

from __future__ import annotations

from typing import Any

import pytest

from loopfuse import Decision, Guard
from tests.store_fixtures import GuardFactory

SECRET = "s3cr3t-argument"
RESULT = "private-result-text"
NO_WINDOW = {"duplicate_limit": 6, "max_calls_per_agent": 0}


def step(guard: Guard, args: Any, result: Any = None, ok: bool | None = True, tool: str = "read") -> Decision:
    """Check the call and, when allowed and ``result`` is given, report it."""
    decision = guard.check(tool, args, "a")
    if decision.allowed and result is not None:
        guard.record_result(tool, args, result, "a", ok=ok)
    return decision


def first_denial(guard: Guard, calls: list[tuple[Any, Any]], ok: bool | None = True) -> Decision:
    for args, result in calls:
        decision = step(guard, args, result, ok)
        if not decision.allowed:
            return decision
    raise AssertionError("no call was denied")


def assert_text(decision: Decision, rule: str, phrase: str) -> None:
    text = decision.message or ""
    assert decision.rule == rule, (decision.rule, text)
    assert phrase in text, text
    assert SECRET not in text and RESULT not in text
    assert "change your approach" in text or "Stop calling tools" in text


def test_cap(make_guard: GuardFactory) -> None:
    guard = make_guard({"circuit_breaker": {"max_calls_per_agent": 3}})
    denied = first_denial(guard, [({"p": f"{SECRET}{i}"}, None) for i in range(4)])
    assert_text(
        denied,
        "circuit_breaker.max_calls_per_agent",
        "made 3 tool calls, the most allowed (max_calls_per_agent 3)",
    )


def test_duplicate_limit(make_guard: GuardFactory) -> None:
    guard = make_guard({"circuit_breaker": {"duplicate_limit": 2, "window": 30, "max_calls_per_agent": 0}})
    denied = first_denial(guard, [({"p": SECRET}, None)] * 3)
    assert_text(
        denied, "circuit_breaker.duplicate_limit", "ran 2 times among the last 30 calls (duplicate_limit 2)"
    )


def test_per_tool_duplicate_limit(make_guard: GuardFactory) -> None:
    guard = make_guard({"circuit_breaker": NO_WINDOW, "tools": {"read": {"duplicate_limit": 3}}})
    denied = first_denial(guard, [({"p": SECRET}, None)] * 4)
    assert_text(
        denied, "tools.duplicate_limit", "ran 3 times among the last 200 calls (duplicate_limit 3 for read)"
    )


def test_result_limit(make_guard: GuardFactory) -> None:
    rules = {"result_limit": 3, "same_result_limit": 0, "progress_limit": 0}
    guard = make_guard({"circuit_breaker": {**NO_WINDOW, **rules}})
    denied = first_denial(guard, [({"p": SECRET}, RESULT)] * 4)
    assert_text(
        denied,
        "circuit_breaker.result_limit",
        "ran 3 times among the last 200 calls without a new result (result_limit 3)",
    )


def test_same_result_limit_names_its_own_key_not_duplicate_limit(make_guard: GuardFactory) -> None:
    guard = make_guard({"circuit_breaker": {**NO_WINDOW, "same_result_limit": 5}})
    denied = first_denial(guard, [({"p": SECRET}, RESULT)] * 6)
    assert_text(
        denied,
        "circuit_breaker.same_result_limit",
        "returned the same result 5 times in a row (same_result_limit 5)",
    )
    assert "duplicate_limit" not in (denied.message or "")


def test_progress_limit(make_guard: GuardFactory) -> None:
    guard = make_guard({"circuit_breaker": NO_WINDOW})
    denied = first_denial(guard, [({"p": SECRET}, f"{RESULT} {i}") for i in range(9)])
    assert_text(denied, "circuit_breaker.progress_limit", "ran 8 times in a row (progress_limit 8)")


def test_loop_brake(make_guard: GuardFactory) -> None:
    guard = make_guard({"circuit_breaker": {"enabled": False}, "loop_brake": {"max_repeats": 2}})
    denied = first_denial(guard, [({"p": SECRET}, None)] * 3)
    assert_text(denied, "loop_brake.max_repeats", "3 times in a row (max_repeats 2)")


def test_same_error_limit(make_guard: GuardFactory) -> None:
    guard = make_guard({"same_error": {"limit": 3, "identical_limit": 0}})
    denied = first_denial(guard, [({"p": f"{SECRET}{i}"}, RESULT) for i in range(4)], ok=False)
    assert_text(
        denied,
        "same_error.limit",
        "read calls like this one failed with the same error 3 times in a row (same_error limit 3)",
    )


def test_same_error_identical_limit(make_guard: GuardFactory) -> None:
    guard = make_guard({"same_error": {"limit": 10, "identical_limit": 2}})
    denied = first_denial(guard, [({"p": SECRET}, RESULT)] * 3, ok=False)
    assert_text(
        denied,
        "same_error.identical_limit",
        "failed with the same error 2 times in a row (same_error identical_limit 2)",
    )


def test_near_duplicate(make_guard: GuardFactory) -> None:
    config = {"limit": 3, "window": 10, "only_with_results": False}
    guard = make_guard({"near_duplicate": config, "circuit_breaker": NO_WINDOW})
    denied = first_denial(guard, [({"p": f"{SECRET} page {i}"}, None) for i in range(1, 5)])
    assert_text(
        denied, "near_duplicate.limit", "ran 3 times among the last 10 calls (near_duplicate limit 3)"
    )


def test_per_tool_near_duplicate_limit(make_guard: GuardFactory) -> None:
    near = {"only_with_results": False}
    guard = make_guard(
        {"near_duplicate": near, "circuit_breaker": NO_WINDOW, "tools": {"read": {"near_duplicate_limit": 2}}}
    )
    denied = first_denial(guard, [({"p": f"{SECRET} page {i}"}, None) for i in range(1, 4)])
    assert_text(
        denied,
        "tools.near_duplicate_limit",
        "ran 2 times among the last 50 calls (near_duplicate_limit 2 for read)",
    )


def test_cycle(make_guard: GuardFactory) -> None:
    guard = make_guard({"cycle": {"min_repeats": 3}, "circuit_breaker": NO_WINDOW})
    calls = [({"p": f"{SECRET} {c}"}, f"{RESULT} {c}") for c in "abababab"]
    denied = first_denial(guard, calls)
    assert_text(
        denied,
        "cycle.min_repeats",
        "the same sequence of calls ran 3 times back to back (cycle min_repeats 3)",
    )


@pytest.mark.parametrize("template", ["no: {rule} {count}/{limit}"])
def test_template_may_name_the_rule(make_guard: GuardFactory, template: str) -> None:
    guard = make_guard(
        {"circuit_breaker": {"duplicate_limit": 1, "max_calls_per_agent": 0, "deny_message": template}}
    )
    denied = first_denial(guard, [({"p": SECRET}, None)] * 2)
    assert denied.message == "no: circuit_breaker.duplicate_limit 1/1"
