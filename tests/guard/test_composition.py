"""Breakers together: order, monotone denial, nothing recorded on denial, threads."""

from __future__ import annotations

import threading

from loopfuse import Guard

from .helpers import run


def test_order_is_cap_then_duplicate_then_repeat() -> None:
    guard = Guard.from_config(
        {
            "circuit_breaker": {"duplicate_limit": 2, "max_calls_per_agent": 3},
            "loop_brake": {"max_repeats": 2},
        }
    )
    # Third identical call: duplicate (2 in window) and repeat (2 in a row) both deny; duplicate wins.
    assert run(guard, [("f", {})] * 3) == ["ok", "ok", "duplicate"]
    assert run(guard, [("g", {}), ("h", {})]) == ["ok", "cap"]


def test_a_call_denied_by_one_breaker_is_recorded_by_none() -> None:
    guard = Guard.from_config({"circuit_breaker": {"duplicate_limit": 1, "max_calls_per_agent": 3}})
    assert run(guard, [("f", {})] * 10) == ["ok"] + ["duplicate"] * 9
    # Nine denials raised no counter: two more distinct calls still fit under the cap of 3.
    assert run(guard, [("g", {}), ("h", {}), ("i", {})]) == ["ok", "ok", "cap"]


def test_repeat_denial_is_not_recorded_by_the_window() -> None:
    guard = Guard.from_config({"circuit_breaker": {"duplicate_limit": 4}, "loop_brake": {"max_repeats": 2}})
    a, b = ("f", {"x": 1}), ("f", {"x": 2})
    assert run(guard, [a, a, a, a, a]) == ["ok", "ok", "repeat", "repeat", "repeat"]
    # Only two a's are in the window: two more (broken by b) run before the window breaker trips.
    assert run(guard, [b, a, b, a, b, a]) == ["ok", "ok", "ok", "ok", "ok", "duplicate"]


def test_escalation_after_consecutive_denials_and_reset_by_an_allowed_call() -> None:
    guard = Guard.from_config(
        {"circuit_breaker": {"duplicate_limit": 1}, "guard": {"abort_after_denials": 3}}
    )
    guard.check("f", {}, "a")
    flags = [guard.check("f", {}, "a").escalate for _ in range(4)]
    assert flags == [False, False, True, True]
    guard.check("g", {}, "a")
    assert guard.check("f", {}, "a").escalate is False
    assert guard.stats()["escalations"] == 2


def test_escalation_can_be_disabled() -> None:
    guard = Guard.from_config(
        {"circuit_breaker": {"duplicate_limit": 1}, "guard": {"abort_after_denials": 0}}
    )
    assert not any(guard.check("f", {}, "a").escalate for _ in range(100))


def test_concurrent_checks_for_one_agent_give_exact_counts() -> None:
    guard = Guard.from_config(
        {"circuit_breaker": {"duplicate_limit": 50, "max_calls_per_agent": 0, "window": 1000}}
    )
    allowed: list[int] = []
    lock = threading.Lock()
    barrier = threading.Barrier(8)

    def worker() -> None:
        barrier.wait()
        mine = sum(guard.check("search", {"q": "same"}, "agent").allowed for _ in range(100))
        with lock:
            allowed.append(mine)

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sum(allowed) == 50
    stats = guard.stats()
    assert (stats["checks"], stats["allowed"], stats["denied"]) == (800, 50, 750)


def test_concurrent_cap_is_exact() -> None:
    guard = Guard.from_config({"circuit_breaker": {"max_calls_per_agent": 123}})
    counter = iter(range(10**6))
    results: list[bool] = []

    def worker() -> None:
        for _ in range(100):
            results.append(guard.check("f", {"i": next(counter)}, "agent").allowed)

    threads = [threading.Thread(target=worker) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results.count(True) == 123
