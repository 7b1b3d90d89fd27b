"""Escalation is reported once per agent per episode; Decision.escalate stays set."""

from __future__ import annotations

from loopfuse.testing import RecordingListener
from tests.store_fixtures import GuardFactory


def escalations(listener: RecordingListener) -> list[tuple[str, int]]:
    return [(str(e.agent), e.decision.count) for e in listener.of("on_escalate") if e.decision is not None]


CONFIG = {
    "circuit_breaker": {"duplicate_limit": 1, "window": 10, "max_calls_per_agent": 0},
    "guard": {"abort_after_denials": 3},
}


def test_on_escalate_fires_once_per_episode(make_guard: GuardFactory) -> None:
    listener = RecordingListener()
    guard = make_guard(CONFIG, listeners=[listener])
    guard.check("t", {"x": 1}, "a")
    flags = [guard.check("t", {"x": 1}, "a").escalate for _ in range(6)]
    assert flags == [False, False, True, True, True, True]  # adapters stop on every one
    assert escalations(listener) == [("a", 1)]
    guard.check("t", {"x": 2}, "a")  # an allowed call ends the episode
    assert [guard.check("t", {"x": 1}, "a").escalate for _ in range(4)] == [False, False, True, True]
    assert escalations(listener) == [("a", 1)] * 2


def test_each_agent_and_forget_start_new_episodes(make_guard: GuardFactory) -> None:
    listener = RecordingListener()
    guard = make_guard(CONFIG, listeners=[listener])
    for agent in ("a", "b"):
        guard.check("t", {"x": 1}, agent)
        for _ in range(5):
            guard.check("t", {"x": 1}, agent)
    assert escalations(listener) == [("a", 1), ("b", 1)]
    guard.forget("a")
    guard.check("t", {"x": 1}, "a")
    assert [guard.check("t", {"x": 1}, "a").escalate for _ in range(4)] == [False, False, True, True]
    assert escalations(listener) == [("a", 1), ("b", 1), ("a", 1)]
