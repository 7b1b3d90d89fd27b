"""The warning rung (``warn_at``): the call runs and the model is told, on both stores."""

from __future__ import annotations

import pytest

from loopfuse import ConfigError, Guard, parse_config
from tests.store_fixtures import GuardFactory


def test_off_by_default_no_call_carries_a_warning(make_guard: GuardFactory) -> None:
    guard = make_guard()
    decisions = [guard.check("search", {"q": "same"}, "a") for _ in range(7)]
    assert [d.warning for d in decisions] == [None] * 7


def test_the_window_warns_from_warn_at_then_denies_at_its_limit(make_guard: GuardFactory) -> None:
    guard = make_guard({"circuit_breaker": {"warn_at": 4}})
    decisions = [guard.check("search", {"q": "same"}, "a") for _ in range(7)]
    assert [d.allowed for d in decisions] == [True] * 6 + [False]
    assert [d.warning is not None for d in decisions] == [False] * 4 + [True, True, False]
    text = decisions[4].warning or ""
    assert text.startswith("[loopfuse warning: this search call ran")
    assert "duplicate: 4 times, warn_at 4" in text and "same" not in text
    assert decisions[4].kind is None and decisions[4].message is None


def test_a_warned_call_counts_like_any_allowed_call(make_guard: GuardFactory) -> None:
    plain, warned = make_guard(), make_guard({"circuit_breaker": {"warn_at": 2}})
    for agent, guard in (("plain", plain), ("warned", warned)):
        allowed = []
        for _ in range(7):
            allowed.append(guard.check("read", {"p": "x"}, agent).allowed)
            guard.record_result("read", {"p": "x"}, "same text", agent)
        assert allowed == [True] * 5 + [False] * 2


def test_stall_warns_before_it_denies(make_guard: GuardFactory) -> None:
    guard = make_guard({"stall": {"warn_at": 2}, "same_error": {"enabled": False}})
    warnings = []
    for _ in range(4):
        decision = guard.check("edit", {"line": 3}, "a")
        warnings.append(decision.warning is not None)
        guard.record_result("edit", {"line": 3}, "E999 syntax error", "a", ok=False)
    assert warnings == [False, False, True, True]
    assert not guard.check("edit", {"line": 3}, "a").allowed


def test_shadow_mode_never_warns_but_counts_it(make_guard: GuardFactory) -> None:
    guard = make_guard({"circuit_breaker": {"warn_at": 1}, "guard": {"mode": "shadow"}})
    assert [guard.check("ls", {}, "a").warning for _ in range(3)] == [None] * 3
    assert guard.stats()["warnings"] == {"duplicate": 2}


def test_warn_at_is_checked_at_construction() -> None:
    with pytest.raises(ConfigError, match="warn_at"):
        parse_config({"stall": {"warn_at": -1}})
    with pytest.raises(ConfigError, match="warn_at"):
        Guard.from_config({"cycle": {"warn_at": 1}})
