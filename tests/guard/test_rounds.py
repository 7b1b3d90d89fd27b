"""Rounds (``round=``): identical calls of one model turn count once; repeated rounds are a cycle."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any

import pytest

from loopfuse import Guard, GuardListener
from loopfuse._rounds import Rounds
from loopfuse.decision import Decision
from loopfuse.testing import FakeClock
from tests.store_fixtures import GuardFactory

ALLOWED = Decision(True, "read")


def test_identical_calls_of_one_round_count_once(make_guard: GuardFactory) -> None:
    guard = make_guard()
    for turn in range(6):  # each turn asks for the same file three times in parallel
        decisions = [guard.check("read", {"path": "a.py"}, "a", round=turn) for _ in range(3)]
        assert all(d.allowed for d in decisions)
    denied = guard.check("read", {"path": "a.py"}, "a", round=6)
    assert (denied.allowed, denied.kind, denied.count) == (False, "duplicate", 6)
    again = guard.check("read", {"path": "a.py"}, "a", round=6)
    assert again == denied  # the same call again in the same round: the same answer, not counted


def test_a_round_repeating_its_whole_set_in_any_order_is_denied_as_a_cycle(make_guard: GuardFactory) -> None:
    guard = make_guard({"circuit_breaker": {"duplicate_limit": 50}})
    orders = [("a", "b", "c"), ("c", "a", "b"), ("b", "c", "a")]
    for turn, order in enumerate(orders):
        assert all(guard.check("read", {"path": p}, "x", round=turn).allowed for p in order)
    decision = guard.check("read", {"path": "b"}, "x", round=3)
    assert (decision.allowed, decision.kind, decision.rule) == (False, "cycle", "cycle.min_repeats")
    assert (decision.count, decision.limit) == (3, 3)
    assert guard.check("read", {"path": "new"}, "x", round=3).allowed  # something new still runs


def test_repeating_a_denied_round_is_denied_until_the_run_stops(make_guard: GuardFactory) -> None:
    """A denied round does not count: it must not reset the streak, or the same round
    would run again three times after each denial and never escalate."""
    guard = make_guard({"duplicate": {"enabled": False}})
    turns = [[guard.check("read", {"path": p}, "x", round=turn) for p in ("a", "b")] for turn in range(6)]
    shown = ["".join("E" if d.escalate else "." if d.allowed else "C" for d in turn) for turn in turns]
    assert shown == ["..", "..", "..", "CC", "EE", "EE"]


def turns_allowed(guard: Guard, results: Callable[[int], str], turns: int = 8) -> int:
    """Turns of a debugger's step and its variables in parallel, each answered ``results(turn)``."""
    for turn in range(turns):
        for tool in ("step_over", "get_variables"):
            if not guard.check(tool, {}, "x", round=turn).allowed:
                return turn
            guard.record_result(tool, {}, f"{tool}: {results(turn)}", "x", ok=True)
    return turns


def test_a_repeated_round_whose_results_change_is_progress(make_guard: GuardFactory) -> None:
    """Its results were never read: a step and its variables, new each turn, were refused as
    a cycle at the 4th turn and the run stopped at the 5th."""
    guard = make_guard({"duplicate": {"enabled": False}})
    assert turns_allowed(guard, lambda turn: "abcdefgh"[turn]) == 8


def test_a_repeated_round_with_the_same_results_is_still_a_cycle(make_guard: GuardFactory) -> None:
    guard = make_guard({"duplicate": {"enabled": False}})
    assert turns_allowed(guard, lambda turn: "the same") == 3


def test_rounds_that_change_are_never_denied(make_guard: GuardFactory) -> None:
    guard = make_guard({"circuit_breaker": {"duplicate_limit": 50}})
    for turn in range(10):
        assert guard.check("read", {"path": "a"}, "x", round=turn).allowed
        assert guard.check("read", {"path": f"f{turn}"}, "x", round=turn).allowed


def test_async_hosts_get_the_same_answers(make_guard: GuardFactory) -> None:
    guard = make_guard()

    async def turn(n: int) -> list[bool]:
        checks = [guard.acheck("read", {"path": "a.py"}, "a", round=n) for _ in range(3)]
        return [d.allowed for d in await asyncio.gather(*checks)]

    async def turns() -> list[list[bool]]:
        answers = [await turn(n) for n in range(7)]
        await guard.aclose()  # the async connections belong to this event loop
        return answers

    assert asyncio.run(turns()) == [[True] * 3] * 6 + [[False] * 3]


class Hostile:
    """A round id whose comparison raises."""

    def __eq__(self, other: object) -> bool:
        raise RuntimeError("no")

    __hash__ = object.__hash__


def test_a_round_id_that_cannot_be_compared_fails_open_to_plain_counting(make_guard: GuardFactory) -> None:
    guard = make_guard()
    allowed = [guard.check("read", {"path": "a"}, "a", round=Hostile()).allowed for _ in range(7)]
    assert allowed == [True] * 6 + [False]


def test_the_rounds_of_idle_agents_go_as_their_state_does() -> None:
    now = [0.0]
    rounds = Rounds(max_agents=100_000, min_repeats=3, idle_seconds=10, clock=lambda: now[0])
    for run in range(200):  # finished runs, each a turn of parallel reads
        for key in (1, 2, 3):
            rounds.check(f"run-{run}", 1, key, lambda: ALLOWED, lambda outcome: ALLOWED)
    now[0] += 1000  # all idle far past idle_seconds
    for turn in range(256):
        rounds.check("live", turn, 9, lambda: ALLOWED, lambda outcome: ALLOWED)
    assert len(rounds) == 1


def test_an_agent_back_after_its_idle_time_starts_its_rounds_afresh() -> None:
    """Its store state is gone (both stores), so its rounds are too: no streak carried over."""
    clock = FakeClock()
    guard = Guard.from_config({"guard": {"agent_idle_seconds": 60}}, clock=clock)
    for turn in range(3):  # the same pair of reads: three rounds in a row
        assert all(guard.check("read", {"path": p}, "a", round=turn) for p in "xy")
    clock.advance(120)
    assert all(guard.check("read", {"path": p}, "a", round=3) for p in "xy")


class CheckingAgain(GuardListener):
    """A listener that checks a call of another agent (or the same) from inside a hook."""

    def __init__(self, other: dict[str, str]) -> None:
        self.guard: Guard | None = None
        self.other = other
        self.heard = 0

    def on_check(self, decision: Decision, agent: Any) -> None:
        if self.guard is not None and self.heard < 50:
            self.heard += 1
            self.guard.check("read", {"path": "x"}, self.other[agent], round=self.heard)


def finished(target: Callable[[], object], *more: Callable[[], object]) -> bool:
    """Whether each target, run in a thread of its own, ends within 10 s (no deadlock)."""
    threads = [threading.Thread(target=t, daemon=True) for t in (target, *more)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    return not any(thread.is_alive() for thread in threads)


@pytest.mark.parametrize("agents", [{"a": "a"}, {"a": "b", "b": "a"}], ids=["same agent", "two agents"])
def test_a_listener_that_checks_again_from_a_round_never_deadlocks(agents: dict[str, str]) -> None:
    listener = CheckingAgain(agents)
    guard = Guard(listeners=[listener])
    listener.guard = guard
    runs = [
        lambda agent=agent: [guard.check("read", {"path": "y"}, agent, round=n) for n in range(20)]
        for agent in agents
    ]
    assert finished(*runs)
    assert listener.heard == 50
