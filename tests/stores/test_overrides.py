"""Escape hatches: guard.paused(agent) and guard.allow_next(agent, tool), on both stores."""

from __future__ import annotations

import asyncio
import gc
import logging
import weakref

import pytest

from loopfuse import ConfigError
from tests.store_fixtures import GuardFactory

LIMIT = {"circuit_breaker": {"duplicate_limit": 2}}


def allowed(guard: object, n: int, agent: str = "a") -> list[bool]:
    return [guard.check("read", {"path": "x"}, agent=agent).allowed for _ in range(n)]  # type: ignore[attr-defined]


def test_a_paused_agent_is_not_judged_and_nothing_counts(
    make_guard: GuardFactory, caplog: pytest.LogCaptureFixture
) -> None:
    guard = make_guard(LIMIT)
    with caplog.at_level(logging.WARNING, logger="loopfuse"), guard.paused("a"):
        assert allowed(guard, 10) == [True] * 10
        assert allowed(guard, 3, "b") == [True, True, False]  # other agents are judged
    assert "agent a paused" in caplog.text and "agent a resumed" in caplog.text
    assert allowed(guard, 3) == [True, True, False]  # the paused calls never counted


def test_pauses_nest(make_guard: GuardFactory) -> None:
    guard = make_guard(LIMIT)
    with guard.paused("a"):
        with guard.paused("a"):
            pass
        assert allowed(guard, 4) == [True] * 4
    assert allowed(guard, 3) == [True, True, False]


def test_allow_next_lets_one_denied_call_through(make_guard: GuardFactory) -> None:
    guard = make_guard(LIMIT)
    assert allowed(guard, 3) == [True, True, False]
    guard.allow_next("a", "read")
    assert allowed(guard, 2) == [True, False]
    guard.allow_next("a", "read", times=2)
    assert allowed(guard, 3) == [True, True, False]
    guard.allow_next("a", "other")
    assert allowed(guard, 1) == [False]


@pytest.mark.parametrize("times", [0, -1, "2", 1.5, True])
def test_allow_next_refuses_a_count_that_is_not_a_positive_integer(
    make_guard: GuardFactory, times: object
) -> None:
    guard = make_guard(LIMIT)
    with pytest.raises(ConfigError, match=r"allow_next times = .* is not allowed: expected an integer >= 1"):
        guard.allow_next("a", "read", times=times)  # type: ignore[arg-type]
    assert allowed(guard, 3) == [True, True, False]


def test_async_checks_see_the_overrides(make_guard: GuardFactory) -> None:
    guard = make_guard(LIMIT)

    async def run() -> list[bool]:
        with guard.paused("a"):
            allowed = [(await guard.acheck("read", {"path": "x"}, agent="a")).allowed for _ in range(5)]
        await guard.aclose()  # closes the asyncio connections opened on this loop
        return allowed

    assert asyncio.run(run()) == [True] * 5


def test_an_unhashable_agent_cannot_be_paused_and_is_judged(make_guard: GuardFactory) -> None:
    guard = make_guard(LIMIT)
    agent: list[str] = ["not", "hashable"]
    with guard.paused(agent):
        pass
    guard.allow_next(agent, "read")
    assert guard.stats()["fail_open"] == {}


def test_a_forgotten_agent_keeps_no_allowance(make_guard: GuardFactory) -> None:
    """An unused allowance outlived ``forget`` (and held the agent)."""
    guard = make_guard(LIMIT)
    guard.allow_next("a", "read")
    guard.forget("a")
    assert allowed(guard, 3) == [True, True, False]


def test_past_4096_unused_allowances_a_new_one_still_works(make_guard: GuardFactory) -> None:
    """A 4,097th allowance was dropped in silence, and the call it was for denied."""
    guard = make_guard(LIMIT)
    for n in range(4_096):
        guard.allow_next(f"finished-{n}", "read")
    assert allowed(guard, 3) == [True, True, False]
    guard.allow_next("a", "read")
    assert allowed(guard, 2) == [True, False]


class Run:
    """A host's run object, used as the agent (named by its ``id`` on Redis)."""

    def __init__(self, run_id: str) -> None:
        self.id = run_id


def test_an_allowance_does_not_keep_an_agent_object_alive(make_guard: GuardFactory) -> None:
    """An unused allowance held the object, and so its state, until forget or 4,096 more."""
    guard = make_guard(LIMIT)
    run = Run("run-1")
    assert allowed(guard, 3, run) == [True, True, False]  # type: ignore[arg-type]
    guard.allow_next(run, "read")
    assert allowed(guard, 2, run) == [True, False]  # type: ignore[arg-type]
    guard.allow_next(run, "read", times=3)  # never used
    gone = weakref.ref(run)
    del run
    gc.collect()
    assert gone() is None


def test_an_allowance_that_cannot_be_kept_says_so(
    make_guard: GuardFactory, caplog: pytest.LogCaptureFixture
) -> None:
    guard = make_guard(LIMIT)
    with caplog.at_level(logging.WARNING, logger="loopfuse"):
        guard.allow_next(["not", "hashable"], "read")
    assert "cannot be allowed a call (not hashable); its calls are judged" in caplog.text
