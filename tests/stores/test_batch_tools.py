"""``[tools.x] batch = true``: one call per item is work, not noise, on both stores."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from loopfuse import ConfigError, Guard
from tests.store_fixtures import GuardFactory

Step = tuple[dict[str, Any], str, bool]  # the call's arguments, its result, whether it failed
Outcome = tuple[bool, str | None, str]  # allowed, kind, rule


def run(guard: Guard, steps: list[Step]) -> list[Outcome]:
    """Check each ``get_order`` call and report its result when allowed."""
    outcomes: list[Outcome] = []
    for args, result, failed in steps:
        d = guard.check("get_order", args, "a")
        outcomes.append((d.allowed, d.kind, d.rule))
        if d.allowed:
            guard.record_result("get_order", args, result, "a", ok=not failed)
    return outcomes


def orders(n: int, result: Callable[[int], str], failed: bool = False, key: str = "id") -> list[Step]:
    return [({key: i}, result(i), failed) for i in range(1, n + 1)]


def same(n: int, result: str, failed: bool = False) -> list[Step]:
    return [({"id": 7}, result, failed)] * n


OK: Outcome = (True, None, "")
NEAR: Outcome = (False, "near_duplicate", "near_duplicate.limit")
TOOL_ERRORS: Outcome = (False, "same_error", "same_error.limit")
IDENTICAL_ERRORS: Outcome = (False, "same_error", "same_error.identical_limit")
SAME_RESULT: Outcome = (False, "duplicate", "circuit_breaker.same_result_limit")

# (name, steps, outcomes without batch, outcomes with batch = true), at the default limits.
TIMELINES = [
    (
        "items named by a number with the same answer",  # numbers masked: one near-duplicate
        orders(10, lambda i: "status: shipped", key="order"),  # key, limit 8 (counted from the
        [OK] * 9 + [NEAR],  # agent's first result on)
        [OK] * 10,
    ),
    (
        "items named by an id key with the same answer",  # an item's id is kept in the near key
        orders(12, lambda i: "status: shipped"),
        [OK] * 12,
        [OK] * 12,
    ),
    (
        "items failing alike",  # numbers masked in errors: one error, tool-wide limit 10
        orders(11, lambda i: f"order {i} not found", failed=True),
        [OK] * 10 + [TOOL_ERRORS],
        [OK] * 11,
    ),
    (
        "one item failing again and again",  # identical_limit 4 holds for a batch tool too
        same(5, "order 7 not found", failed=True),
        [OK] * 4 + [IDENTICAL_ERRORS],
        [OK] * 4 + [IDENTICAL_ERRORS],
    ),
    (
        "one item with the same answer again and again",  # same_result_limit 5 still counts
        same(6, "status: shipped"),
        [OK] * 5 + [SAME_RESULT],
        [OK] * 5 + [SAME_RESULT],
    ),
]


@pytest.mark.parametrize("batch", [False, True], ids=["plain", "batch"])
@pytest.mark.parametrize(("name", "steps", "plain", "batched"), TIMELINES, ids=[t[0] for t in TIMELINES])
def test_batch_timelines(
    make_guard: GuardFactory,
    batch: bool,
    name: str,
    steps: list[Step],
    plain: list[Outcome],
    batched: list[Outcome],
) -> None:
    guard = make_guard({"tools": {"get_order": {"batch": batch}}})
    assert run(guard, steps) == (batched if batch else plain)


def test_a_batch_tools_failures_count_per_call_with_same_error_off(make_guard: GuardFactory) -> None:
    """stall's tool_error_limit reads the batch tools too, with no same_error to hold them."""
    guard = make_guard(
        {
            "same_error": {"enabled": False},
            "stall": {"tool_error_limit": 1},
            "tools": {"get_order": {"batch": True}},
        }
    )
    steps = [({"id": 1}, "order 1 not found", True), ({"id": 2}, "order 2 not found", True)]
    assert run(guard, steps) == [OK, OK]


def test_other_tools_keep_their_masking(make_guard: GuardFactory) -> None:
    guard = make_guard({"tools": {"get_order": {"batch": True}}})
    kinds = []
    for i in range(1, 11):
        d = guard.check("get_page", {"n": i}, "a")
        kinds.append(d.kind)
        guard.record_result("get_page", {"n": i}, "empty", "a")
    assert kinds == [None] * 9 + ["near_duplicate"]


@pytest.mark.parametrize(
    ("rule", "message"),
    [
        ({"batch": "yes"}, r"\[tools.get_order\] batch = 'yes' is not allowed: expected true or false"),
        ({"bach": True}, r"\[tools.get_order\]: unknown key 'bach' \(did you mean 'batch'\?\)"),
    ],
)
def test_bad_batch_values_are_refused_at_construction(rule: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        Guard.from_config({"tools": {"get_order": rule}})
