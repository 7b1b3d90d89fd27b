"""The loop brake inside a Guard, on each store (standalone: tests/breakers/test_loop_brake.py)."""

from __future__ import annotations

from tests.store_fixtures import GuardFactory

from .helpers import run


def test_inside_a_guard_the_brake_returns_a_repeat_decision(make_guard: GuardFactory) -> None:
    guard = make_guard({"loop_brake": {"max_repeats": 3}})
    assert run(guard, [("t", {"a": 1})] * 5) == ["ok"] * 3 + ["repeat"] * 2
    decision = guard.check("t", {"a": 1}, "a")
    assert (decision.count, decision.limit) == (6, 3)


def test_without_a_loop_brake_section_there_is_no_brake(make_guard: GuardFactory) -> None:
    guard = make_guard({"circuit_breaker": {}})
    assert run(guard, [("scroll_down", {})] * 6) == ["ok"] * 6


def test_loop_brake_can_be_disabled(make_guard: GuardFactory) -> None:
    guard = make_guard({"loop_brake": {"enabled": False, "max_repeats": 1}})
    assert run(guard, [("t", {})] * 3) == ["ok"] * 3


def test_guard_brake_streak_is_reset_by_a_different_call(make_guard: GuardFactory) -> None:
    guard = make_guard({"loop_brake": {"max_repeats": 2}})
    a, b = ("t", {"a": 1}), ("t", {"a": 2})
    assert run(guard, [a, a, a, b, a, a]) == ["ok", "ok", "repeat", "ok", "ok", "ok"]
