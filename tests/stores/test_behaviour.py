"""The same behaviour on every store: in process (memory://) and in a real redis-server."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

import pytest

from loopfuse import Decision, Guard
from loopfuse.testing import RecordingListener
from tests.store_fixtures import GuardFactory


def only_window(limit: int, window: int) -> dict[str, Any]:
    return {"circuit_breaker": {"duplicate_limit": limit, "window": window, "max_calls_per_agent": 0}}


def outcome(decision: Decision) -> tuple[bool, str | None, int, int]:
    return decision.allowed, decision.kind, decision.count, decision.limit


def run(guard: Guard, calls: str, agent: Any = "a") -> list[tuple[bool, str | None, int, int]]:
    """One check per letter: the letter is the call's argument."""
    return [outcome(guard.check("read", {"path": c}, agent)) for c in calls]


OK = (True, None, 0, 0)


def test_window_timeline(make_guard: GuardFactory) -> None:
    guard = make_guard(only_window(limit=2, window=3))
    denied = (False, "duplicate", 2, 2)
    # window after each allowed call:
    #  A:[A]  A:[A A]  B:[A A B]  A,A: denied  C:[A B C]  D:[B C D]  A:[C D A]  A:[D A A]  A: denied
    assert run(guard, "AABAACDAAA") == [OK, OK, OK, denied, denied, OK, OK, OK, OK, denied]


def test_cap_is_permanent(make_guard: GuardFactory) -> None:
    guard = make_guard({"circuit_breaker": {"max_calls_per_agent": 3}})
    assert run(guard, "ABC") == [OK, OK, OK]
    assert run(guard, "DEFA") == [(False, "cap", 3, 3)] * 4
    assert run(guard, "G", agent="other") == [OK]


def test_loop_brake_streak_counts_its_refusals(make_guard: GuardFactory) -> None:
    guard = make_guard({"circuit_breaker": {"enabled": False}, "loop_brake": {"max_repeats": 2}})
    assert run(guard, "AAAA") == [OK, OK, (False, "repeat", 3, 2), (False, "repeat", 4, 2)]
    assert run(guard, "BAAA") == [OK, OK, OK, (False, "repeat", 3, 2)]


def test_denied_calls_never_count(make_guard: GuardFactory) -> None:
    guard = make_guard({"circuit_breaker": {"duplicate_limit": 2, "window": 4, "max_calls_per_agent": 4}})
    denied = (False, "duplicate", 2, 2)
    assert run(guard, "AA" + "A" * 5) == [OK, OK] + [denied] * 5
    # Five refusals used neither the cap (4) nor the window: two more calls run, then the cap.
    assert run(guard, "BCD") == [OK, OK, (False, "cap", 4, 4)]


def test_escalation_after_denials_in_a_row(make_guard: GuardFactory) -> None:
    guard = make_guard({**only_window(1, 10), "guard": {"abort_after_denials": 3}})
    guard.check("t", {"x": 1}, "a")
    flags = [guard.check("t", {"x": 1}, "a").escalate for _ in range(4)]
    assert flags == [False, False, True, True]
    assert guard.check("t", {"x": 2}, "a").allowed
    assert guard.check("t", {"x": 1}, "a").escalate is False
    assert guard.stats()["escalations"] == 2


def test_first_denial_per_kind(make_guard: GuardFactory) -> None:
    listener = RecordingListener()
    guard = make_guard({"circuit_breaker": {"duplicate_limit": 1, "max_calls_per_agent": 2}})
    guard.listeners.append(listener)
    run(guard, "AAABCD")
    run(guard, "AA", agent="b")
    assert [(e.kind, e.first) for e in listener.of("on_deny")] == [
        ("duplicate", True),
        ("duplicate", False),
        ("cap", True),
        ("cap", False),
        ("duplicate", True),
    ]


def test_incident_log_first_denial(make_guard: GuardFactory, tmp_path: Any) -> None:
    log = tmp_path / "incidents.jsonl"
    guard = make_guard({"circuit_breaker": {"duplicate_limit": 1, "incident_log": str(log)}})
    run(guard, "AAAA")
    lines = log.read_text().splitlines()
    assert len(lines) == 1 and '"kind": "duplicate"' in lines[0] and '"A"' not in lines[0]


def test_forget(make_guard: GuardFactory) -> None:
    guard = make_guard(only_window(1, 10))
    assert run(guard, "AA") == [OK, (False, "duplicate", 1, 1)]
    guard.forget("a")
    assert run(guard, "AA") == [OK, (False, "duplicate", 1, 1)]


async def test_aforget(make_guard: GuardFactory) -> None:
    guard = make_guard(only_window(1, 10))
    assert run(guard, "AA") == [OK, (False, "duplicate", 1, 1)]
    await guard.aforget("a")
    assert run(guard, "AA") == [OK, (False, "duplicate", 1, 1)]
    await guard.aclose()


async def test_acheck_decides_like_check(make_guard: GuardFactory) -> None:
    guard = make_guard(only_window(2, 10))
    got = [outcome(await guard.acheck("read", {"path": "A"}, "async")) for _ in range(3)]
    assert got == [OK, OK, (False, "duplicate", 2, 2)]
    assert not guard.check("read", {"path": "A"}, "async").allowed
    await guard.aclose()


@dataclass
class Named:
    id: str


class Anonymous:
    pass


def test_string_ids_name_agents(make_guard: GuardFactory) -> None:
    guard = make_guard(only_window(1, 10))
    assert run(guard, "AA", agent="x") == [OK, (False, "duplicate", 1, 1)]
    assert run(guard, "A", agent="y") == [OK]


def test_object_with_id_attribute(make_guard: GuardFactory) -> None:
    guard = make_guard(only_window(1, 10))
    assert run(guard, "A", agent=Named("n1")) == [OK]
    second = run(guard, "A", agent=Named("n1"))
    if make_guard.kind == "redis":  # type: ignore[attr-defined]
        assert second == [(False, "duplicate", 1, 1)]  # the id names the agent in every process
    else:
        assert second == [OK]  # in process, an object is its own agent


def test_agent_without_string_id(make_guard: GuardFactory) -> None:
    guard = make_guard(only_window(1, 10))
    if make_guard.kind == "memory":  # type: ignore[attr-defined]
        agent: object = Anonymous()
        assert run(guard, "AA", agent=agent) == [OK, (False, "duplicate", 1, 1)]
        return
    for agent in (Anonymous(), True, "", Named("")):  # no name every process agrees on
        assert run(guard, "AA", agent=agent) == [OK, OK]  # fails open, counted
    assert guard.stats()["fail_open"]["agent_identity"] == 8


@pytest.mark.parametrize("agent", [uuid.UUID("6f1c2a4e-93d1-4d0b-8c39-2f5d9a7e1b20"), 42])
def test_a_uuid_or_an_integer_is_an_agents_name(make_guard: GuardFactory, agent: object) -> None:
    """``agent=session.id`` where the id is a UUID or an integer: an agent on both stores."""
    guard = make_guard(only_window(1, 10))
    assert run(guard, "AA", agent=agent) == [OK, (False, "duplicate", 1, 1)]
    assert guard.stats()["fail_open"] == {}


@pytest.mark.parametrize("idle", [1e14, 1e18])
def test_an_agent_idle_time_of_ages_is_never(make_guard: GuardFactory, idle: float) -> None:
    """``agent_idle_seconds = 1e18`` ("never expire"): Redis takes an expiry of ages, not the
    number Lua writes for it (``1e+21``), which it refuses."""
    guard = make_guard({**only_window(1, 10), "guard": {"agent_idle_seconds": idle}})
    assert run(guard, "AA") == [OK, (False, "duplicate", 1, 1)]
    assert guard.stats()["fail_open"] == {}
