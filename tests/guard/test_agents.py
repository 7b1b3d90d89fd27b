"""Agent identities: strings, objects, eviction, forget."""

from __future__ import annotations

import gc
from dataclasses import dataclass
from typing import Any

import pytest

from loopfuse import ConfigError, Guard, GuardConfig
from loopfuse.config import CircuitBreakerConfig, GuardSettings
from loopfuse.testing import FakeClock


def strict_guard(clock: FakeClock | None = None, **settings: Any) -> Guard:
    config = GuardConfig(
        circuit_breaker=CircuitBreakerConfig(duplicate_limit=1), guard=GuardSettings(**settings)
    )
    return Guard(config, clock=clock) if clock else Guard(config)


def trip(guard: Guard, agent: object) -> None:
    guard.check("f", {}, agent)


def is_tripped(guard: Guard, agent: object) -> bool:
    return not guard.check("f", {}, agent).allowed


@dataclass
class Agent:  # unhashable (eq without frozen), but weakly referenceable
    name: str


def test_object_agents_keep_their_own_state_and_it_goes_away_with_them() -> None:
    guard = strict_guard()
    one, two = Agent("x"), Agent("x")
    trip(guard, one)
    assert guard.check("f", {}, two).allowed  # equal but distinct objects are distinct agents
    assert is_tripped(guard, one)
    assert guard.stats()["agents"] == 2
    del one, two
    gc.collect()
    assert guard.stats()["agents"] == 0


def test_forget_drops_state_at_once() -> None:
    guard = strict_guard()
    agent = Agent("x")
    trip(guard, "a")
    trip(guard, agent)
    guard.forget("a")
    guard.forget(agent)
    assert not is_tripped(guard, "a")
    assert not is_tripped(guard, agent)


def test_least_recently_seen_string_agents_are_evicted_past_max_agents() -> None:
    guard = strict_guard(max_agents=3)
    for name in ("a", "b", "c"):
        trip(guard, name)
    trip(guard, "a")  # "a" is now the most recently seen
    trip(guard, "d")  # evicts "b"
    assert guard.stats()["agents"] == 3
    assert not is_tripped(guard, "b")
    assert is_tripped(guard, "a")


def test_idle_string_agents_expire() -> None:
    clock = FakeClock()
    guard = strict_guard(clock, agent_idle_seconds=60)
    trip(guard, "idle")
    clock.advance(61)
    for i in range(64):
        guard.check("g", {"i": i}, "busy")
    assert guard.stats()["agents"] == 1
    assert not is_tripped(guard, "idle")


def test_active_agents_do_not_expire() -> None:
    clock = FakeClock()
    guard = strict_guard(clock, agent_idle_seconds=60)
    trip(guard, "a")
    for _ in range(100):
        clock.advance(30)
        guard.check("g", {"t": clock.now}, "a")
    assert is_tripped(guard, "a")


def test_hashable_values_that_are_not_weakly_referenceable_are_agents_too() -> None:
    guard = strict_guard()
    trip(guard, ("run", 1))
    assert is_tripped(guard, ("run", 1))
    trip(guard, ("run", 2))
    assert is_tripped(guard, ("run", 2))


def test_an_identity_the_guard_cannot_key_fails_open() -> None:
    guard = strict_guard()
    agent: dict[str, str] = {"id": "x"}  # neither hashable nor weakly referenceable
    assert all(guard.check("f", {}, agent).allowed for _ in range(3))
    assert guard.stats()["fail_open"] == {"agent_identity": 3}


@pytest.mark.parametrize("clock", ["x", 3, None])
def test_a_clock_that_is_not_a_function_is_refused_when_the_guard_is_built(clock: object) -> None:
    with pytest.raises(ConfigError, match=r"clock = .* is not allowed: expected a function"):
        Guard(clock=clock)  # type: ignore[arg-type]
