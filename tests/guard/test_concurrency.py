"""Threads and event loops at once: limits hold, nothing raises, nothing hangs (found by a
concurrency audit; each test failed on the code before its fix)."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from loopfuse import Guard, GuardListener
from loopfuse._awaited import AwaitedCalls
from loopfuse._calls import CallKey
from loopfuse._state import AgentState, ToolResult

from .test_rounds import finished


class Slow:
    """A breaker that allows everything, slowly for the thread named ``slow``: a decision
    that takes a while, as a busy store's does."""

    kind = "slow"

    def check(self, state: AgentState, call: CallKey) -> None:
        if threading.current_thread().name == "slow":
            time.sleep(0.3)

    def record(self, state: AgentState, call: CallKey) -> None: ...

    def refused(self, state: AgentState, call: CallKey) -> None: ...

    def observe(self, state: AgentState, call: CallKey, result: ToolResult) -> None: ...


def in_thread(name: str, target: Any, delay: float = 0.0) -> threading.Thread:
    def run() -> None:
        time.sleep(delay)
        target()

    thread = threading.Thread(target=run, name=name, daemon=True)
    thread.start()
    return thread


def test_a_round_that_starts_while_another_decides_gets_none_of_its_decisions() -> None:
    """Each call in a round of its own always reaches the breakers: the window's limit holds."""
    guard = Guard.from_config(
        {"duplicate": {"limit": 2}, "guard": {"abort_after_denials": 0}}, breakers=[Slow()]
    )
    allowed: dict[str, bool] = {}

    def check(round_id: str) -> None:
        allowed[round_id] = guard.check("search", {"q": "same"}, "a", round=round_id).allowed

    slow, fast = in_thread("slow", lambda: check("r1")), in_thread("fast", lambda: check("r2"), 0.1)
    slow.join(5), fast.join(5)
    for round_id in ("r3", "r4"):
        check(round_id)
    assert sum(allowed.values()) == 2
    assert guard.stats()["allowed"] == 2


class CheckingAgain(GuardListener):
    def __init__(self, guard: Guard) -> None:
        self.guard, self.heard = guard, 0

    def on_check(self, decision: Any, agent: Any) -> None:
        self.heard += 1
        if threading.current_thread().name == "slow":
            self.guard.check("read", {"path": "b"}, agent, round="turn-1")


def test_a_listener_added_while_a_round_is_decided_never_deadlocks() -> None:
    guard = Guard(breakers=[Slow()])
    listener = CheckingAgain(guard)
    host = in_thread("slow", lambda: guard.check("read", {"path": "a"}, "a", round="turn-1"))
    time.sleep(0.1)
    guard.listeners.append(listener)  # while the check is in flight
    host.join(10)
    assert not host.is_alive()
    assert listener.heard == 2


@pytest.fixture
def switching_often() -> Iterator[None]:
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(interval)


@pytest.mark.usefixtures("switching_often")
def test_the_awaited_calls_of_many_threads_are_kept_without_error() -> None:
    awaited, call, errors = AwaitedCalls(), CallKey("t", b"x", 1), []
    awaited.take("t", None)  # a result was reported: keys are kept from now on

    def keep() -> None:
        try:
            for _ in range(30_000):
                awaited.keep(object(), call)
        except Exception as exc:  # a KeyError or RuntimeError before the fix
            errors.append(exc)

    assert finished(*[keep] * 8)
    assert errors == []
