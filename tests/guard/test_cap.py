"""The call cap: a lifetime limit per agent."""

from __future__ import annotations

from tests.store_fixtures import GuardFactory

from .helpers import run


def distinct(n: int, start: int = 0) -> list[tuple[str, dict[str, int]]]:
    return [("read", {"line": i}) for i in range(start, start + n)]


def test_cap_denies_every_call_after_the_limit_forever(make_guard: GuardFactory) -> None:
    guard = make_guard({"circuit_breaker": {"max_calls_per_agent": 5}})
    assert run(guard, distinct(5)) == ["ok"] * 5
    assert run(guard, distinct(20, 100)) == ["cap"] * 20


def test_cap_decision_reports_calls_made(make_guard: GuardFactory) -> None:
    guard = make_guard({"circuit_breaker": {"max_calls_per_agent": 3}})
    run(guard, distinct(3))
    decision = guard.check("read", {"line": 99}, "a")
    assert (decision.kind, decision.count, decision.limit) == ("cap", 3, 3)
    assert "(max_calls_per_agent 3)" in (decision.message or "")


def test_default_cap_is_300(make_guard: GuardFactory) -> None:
    guard = make_guard()
    assert run(guard, distinct(300)) == ["ok"] * 300
    assert run(guard, distinct(1, 1000)) == ["cap"]


def test_zero_disables_the_cap(make_guard: GuardFactory) -> None:
    guard = make_guard({"circuit_breaker": {"max_calls_per_agent": 0}})
    assert run(guard, distinct(1000)) == ["ok"] * 1000


def test_cap_is_per_agent(make_guard: GuardFactory) -> None:
    guard = make_guard({"circuit_breaker": {"max_calls_per_agent": 2}})
    run(guard, distinct(2), agent="one")
    assert run(guard, distinct(2), agent="two") == ["ok", "ok"]
    assert run(guard, distinct(1, 50), agent="one") == ["cap"]


def test_cap_wins_over_the_window_breaker(make_guard: GuardFactory) -> None:
    guard = make_guard({"circuit_breaker": {"max_calls_per_agent": 2, "duplicate_limit": 2}})
    assert run(guard, [("f", {})] * 3) == ["ok", "ok", "cap"]
