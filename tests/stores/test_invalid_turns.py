"""note_invalid: turns with no usable tool call, on both stores."""

from __future__ import annotations

import asyncio

import pytest

from loopfuse import Guard
from loopfuse.testing import RecordingListener
from tests.store_fixtures import GuardFactory


def invalid_turns(guard: Guard, n: int, agent: str = "a") -> list[bool]:
    return [guard.note_invalid(agent=agent, reason="no tool call").allowed for _ in range(n)]


def test_the_limit_th_invalid_turn_in_a_row_is_denied(make_guard: GuardFactory) -> None:
    guard = make_guard({"invalid": {"limit": 3}})
    assert invalid_turns(guard, 4) == [True, True, False, False]
    decision = guard.note_invalid(agent="a")
    assert (decision.kind, decision.count, decision.limit) == ("invalid", 5, 3)
    assert decision.message is not None and "invalid limit 3" in decision.message
    assert "no tool call" not in decision.message  # the reason is never echoed


def test_an_allowed_tool_call_ends_the_streak(make_guard: GuardFactory) -> None:
    guard = make_guard({"invalid": {"limit": 3}})
    for step in range(10):
        assert invalid_turns(guard, 2) == [True, True]
        assert guard.check("search", {"q": f"query {step}"}, agent="a").allowed


def test_escalation_after_abort_after_denials_denials(make_guard: GuardFactory) -> None:
    guard = make_guard({"invalid": {"limit": 2}, "guard": {"abort_after_denials": 3}})
    escalations = [guard.note_invalid(agent="a").escalate for _ in range(6)]
    assert escalations == [False, False, False, True, True, True]
    assert guard.stats()["denials"]["invalid"] == 5


def test_no_escalation_when_abort_after_denials_is_off(make_guard: GuardFactory) -> None:
    guard = make_guard({"invalid": {"limit": 2}, "guard": {"abort_after_denials": 0}})
    assert not any(guard.note_invalid(agent="a").escalate for _ in range(20))


def test_agents_have_their_own_streaks(make_guard: GuardFactory) -> None:
    guard = make_guard({"invalid": {"limit": 2}})
    assert invalid_turns(guard, 1, "a") + invalid_turns(guard, 1, "b") == [True, True]
    assert not guard.note_invalid(agent="a").allowed
    guard.forget("a")
    assert guard.note_invalid(agent="a").allowed


def test_invalid_turns_never_count_toward_the_call_breakers(make_guard: GuardFactory) -> None:
    guard = make_guard({"circuit_breaker": {"duplicate_limit": 2}, "invalid": {"limit": 100}})
    invalid_turns(guard, 20)
    assert guard.check("read", {"path": "x"}, agent="a").allowed
    assert guard.check("read", {"path": "x"}, agent="a").allowed


def test_disabled_and_shadow(make_guard: GuardFactory) -> None:
    off = make_guard({"invalid": {"enabled": False, "limit": 1}})
    assert invalid_turns(off, 5) == [True] * 5
    shadow = make_guard({"invalid": {"limit": 1}, "guard": {"mode": "shadow"}})
    decision = shadow.note_invalid(agent="a")
    assert decision.allowed and decision.shadow and decision.kind == "invalid"


def test_async_hosts(make_guard: GuardFactory) -> None:
    guard = make_guard({"invalid": {"limit": 2}})

    async def run() -> list[bool]:
        allowed = [(await guard.anote_invalid(agent="a")).allowed for _ in range(3)]
        await guard.aclose()  # closes the asyncio connections opened on this loop
        return allowed

    assert asyncio.run(run()) == [True, False, False]


def test_an_unreachable_store_allows(own_redis: object) -> None:
    server = own_redis
    guard = Guard.from_config({"invalid": {"limit": 1}, "store": {"url": server.url}})  # type: ignore[attr-defined]
    server.stop()  # type: ignore[attr-defined]
    assert guard.note_invalid(agent="a").allowed
    assert guard.stats()["fail_open"] == {"store": 1}
    guard.close()


def test_a_bad_limit_is_refused_at_construction() -> None:
    from loopfuse import ConfigError

    with pytest.raises(ConfigError, match=r"invalid.*limit.*0"):
        Guard.from_config({"invalid": {"limit": 0}})


def test_escalation_is_reported_once_per_streak(make_guard: GuardFactory) -> None:
    listener = RecordingListener()
    guard = make_guard({"invalid": {"limit": 2}}, listeners=[listener])
    invalid_turns(guard, 8)
    assert len(listener.of("on_escalate")) == 1
    decision = guard.note_invalid(agent="a")
    assert decision.rule == "invalid.limit" and decision.escalate
