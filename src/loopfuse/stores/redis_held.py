"""The results a Redis store holds back, so that a tool call costs one round trip.

A reported result waits for the agent's next check and travels with it. It goes on its own,
in one round trip per agent, when no check came for ``delay`` seconds (one daemon thread per
store sends it), when the agent holds more than ``PER_AGENT`` results (at once, by the caller),
when all agents hold more than ``OVERALL`` (by the thread; beyond ``4 * OVERALL``, when the
thread falls behind, the caller also sends its agent's and the oldest agent's: two round trips
at most, so a result never waits on the whole backlog), at ``flush``/``close``, and at
interpreter exit.

While a round trip carries an agent's results, the agent's next round trips wait for it (the
agent's "flight"), so that Redis applies results in the order they were reported and a check
sees every result reported before it, as in process.
"""

from __future__ import annotations

import asyncio
import atexit
import itertools
import os
import threading
import time
import weakref
from collections.abc import Callable
from typing import Any, NamedTuple

from .base import StoreUnavailableError

__all__ = ["FLIGHT_WAIT", "OVERALL", "PER_AGENT", "Flight", "Held", "HeldResults"]

PER_AGENT = 16  # as many as the guard awaits (parallel calls of one turn)
OVERALL = 1024
FLIGHT_WAIT = 5.0  # seconds between two looks at another round trip carrying an agent's results
FLIGHT_PATIENCE = 30.0  # seconds a round trip waits for one in flight; then it goes without results
LINGER = 5.0  # an idle flusher thread ends after this long without results to send

_LIVE: weakref.WeakSet[HeldResults] = weakref.WeakSet()


class Held(NamedTuple):
    """One reported result: the tool (for the lost-result report), the agent as the host named
    it, and the result as ``lua/observe.lua`` reads it (a named tuple: made on every result,
    at a third of a frozen dataclass's cost)."""

    tool: str
    agent: Any
    arg: bytes


class HeldResults:
    """Per agent id, the results reported since the agent's last round trip, oldest first.

    ``send(agent_id)`` is the store's own flush of one agent (it never raises); the flusher
    thread and the exit hook call it. ``lost(tool, agent, error)`` hears of each result a
    failed round trip carried (``StoreSpec.on_result_lost``)."""

    def __init__(
        self,
        delay: float,
        send: Callable[[str], None],
        lost: Callable[[str, Any, StoreUnavailableError], None] | None = None,
    ) -> None:
        self.delay = delay
        self._send = send
        self._lost = lost
        self._reset()
        _LIVE.add(self)

    def _reset(self) -> None:
        self._lock = threading.Lock()
        self._ticking = threading.Condition(self._lock)  # the flusher thread waits on it
        self._landing = threading.Condition(self._lock)  # round trips wait on it for a flight
        self._held: dict[str, tuple[float, list[Held]]] = {}  # oldest first: the order of arrival
        self._flying: dict[str, tuple[int, float]] = {}  # each agent's flight: its thread, when
        self._waiting = 0  # round trips waiting for a flight to land (notify_all costs ~1 us even for none)
        self._count = 0
        self._thread: threading.Thread | None = None
        self._idle = False  # the thread waits for a first result, not for a result's delay
        self._hurry = False  # the thread is to send every held result, due or not
        self._closed = False

    def add(self, agent_id: str, held: Held) -> list[str]:
        """Hold ``held``; the agents whose results the caller must send now: this one when it
        holds more than ``PER_AGENT`` (or the delay is 0), this one and the oldest when all hold
        more than ``4 * OVERALL`` (beyond ``OVERALL`` the thread sends them all): each such
        result takes two agents' off, so what is held stays bounded."""
        with self._lock:
            entry = self._entry(agent_id)
            entry[1].append(held)
            self._count += 1
            if self._count > 4 * OVERALL:
                return list(dict.fromkeys((agent_id, next(iter(self._held)))))
            if self._count > OVERALL and not self._hurry:
                self._hurry = True
                self._wake(at_once=True)
            return [agent_id] if len(entry[1]) > PER_AGENT or not self.delay else []

    def _entry(self, agent_id: str) -> tuple[float, list[Held]]:
        """The agent's held results and since when it holds any (under the lock; made, and the
        flusher thread told, when it held none)."""
        entry = self._held.get(agent_id)
        if entry is None:
            entry = self._held[agent_id] = (time.monotonic(), [])
            if self.delay:
                self._wake()
        return entry

    def carrying(self, agent_id: str) -> Flight:
        """The agent's held results for one round trip (a context manager), which the agent's
        later round trips wait for; reported lost if it fails (``StoreUnavailableError``, or
        anything else). A round trip goes without them, leaving them held, when the one in
        flight was started by this very thread (an event loop's task, while the loop's thread
        makes a sync call or exits: it cannot land while this waits) or after
        ``FLIGHT_PATIENCE`` from the flight's start (a flight never landing, its event loop
        stopped, delays no round trip after that)."""
        with self._lock:
            while (flight := self._flying.get(agent_id)) is not None:
                left = flight[1] + FLIGHT_PATIENCE - time.monotonic()
                if flight[0] == threading.get_ident() or left <= 0:
                    return Flight(self, agent_id, [])  # it cannot land while this thread waits
                self._wait_for_flight(left)
            return Flight(self, agent_id, self._take(agent_id))

    def _wait_for_flight(self, at_most: float = FLIGHT_WAIT) -> None:
        """Wait (under the lock) for a round trip to land, ``FLIGHT_WAIT`` seconds at most."""
        self._waiting += 1
        try:
            self._landing.wait(min(at_most, FLIGHT_WAIT))
        finally:
            self._waiting -= 1

    async def acarrying(self, agent_id: str) -> Flight:
        """``carrying`` for a coroutine: another round trip is waited for by polling, from
        0.2 ms to 5 ms apart (a thread of the default executor per waiter would starve
        redis-py's own use of it, its connects' ``getaddrinfo``)."""
        pause = 0.0002
        while True:
            with self._lock:
                flight = self._flying.get(agent_id)
                if flight is None:
                    return Flight(self, agent_id, self._take(agent_id))
                if time.monotonic() > flight[1] + FLIGHT_PATIENCE:
                    return Flight(self, agent_id, [])
            await asyncio.sleep(pause)
            pause = min(pause * 2, 0.005)

    def _take(self, agent_id: str) -> list[Held]:
        """The agent's held results, now in flight (under the lock; empty: nothing to carry)."""
        entry = self._held.pop(agent_id, None)
        if entry is None:
            return []
        self._count -= len(entry[1])
        self._flying[agent_id] = (threading.get_ident(), time.monotonic())
        return entry[1]

    def _landed(self, agent_id: str, held: list[Held], failure: StoreUnavailableError | None) -> None:
        """The round trip carrying ``held`` is over: the agent's next may go; lost ones are reported."""
        if held:
            with self._lock:
                self._flying.pop(agent_id, None)
                if self._waiting:
                    self._landing.notify_all()
        if failure is not None and self._lost is not None:
            for one in held:
                self._lost(one.tool, one.agent, failure)

    def _returned(self, agent_id: str, held: list[Held]) -> None:
        """The round trip that was to carry ``held`` never sent them: they are held again, ahead
        of any the agent reported since, and the agent's next round trip may go."""
        with self._lock:
            entry = self._entry(agent_id)
            entry[1][:0] = held
            self._count += len(held)
            self._flying.pop(agent_id, None)
            if self._waiting:
                self._landing.notify_all()

    def agents(self) -> list[str]:
        """The agents holding results or with results in flight."""
        with self._lock:
            return list(dict.fromkeys(itertools.chain(self._held, self._flying)))

    def close(self) -> None:
        """Stop the flusher thread (send what is held first: ``agents`` and ``send``)."""
        with self._lock:
            self._closed = True
            self._ticking.notify_all()

    def _wake(self, at_once: bool = False) -> None:
        """A result is held where none was (under the lock): start the flusher thread, or
        tell it if it waits for a first result (else it wakes by itself in time)."""
        if self._thread is None and not self._closed:
            self._thread = threading.Thread(target=self._run, name="loopfuse-redis-results", daemon=True)
            self._thread.start()
        elif self._idle or at_once:
            self._ticking.notify()

    def _run(self) -> None:
        while (due := self._due()) is not None:
            for agent_id in due:
                self._send(agent_id)

    def _due(self) -> list[str] | None:
        """The agents whose oldest result has waited ``delay`` (blocks until there are some);
        None when the thread should end: closed, or idle for ``LINGER`` seconds."""
        with self._lock:
            idle_until = time.monotonic() + LINGER
            while not self._closed:
                now = time.monotonic()
                if self._hurry:
                    self._hurry = False
                    return list(self._held)
                if self._held:
                    first = next(iter(self._held.values()))[0]
                    if first + self.delay <= now:
                        return [a for a, (since, _) in self._held.items() if since + self.delay <= now]
                    self._ticking.wait(first + self.delay - now)
                    idle_until = now + LINGER
                elif now < idle_until:
                    self._idle = True
                    self._ticking.wait(idle_until - now)
                    self._idle = False
                else:
                    break
            self._thread = None
            return None

    def _flush_all(self) -> None:
        for agent_id in self.agents():
            self._send(agent_id)


class Flight:
    """One round trip carrying an agent's held results (``HeldResults.carrying``): ``with`` it
    gives them; when it ends the agent's next round trip may go, and if it failed they are
    reported lost, unless ``unsent`` said they never left (then they are held again)."""

    __slots__ = ("_agent_id", "_owner", "_sent", "held")

    def __init__(self, owner: HeldResults, agent_id: str, held: list[Held]) -> None:
        self._owner, self._agent_id, self.held = owner, agent_id, held
        self._sent = True

    def __enter__(self) -> list[Held]:
        return self.held

    def unsent(self) -> None:
        """The round trip was cancelled before it wrote anything: hold the results again."""
        self._sent = False

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: Any) -> None:
        if not self.held:
            return
        if not self._sent:
            self._owner._returned(self._agent_id, self.held)
            return
        failure = _undelivered(exc) if isinstance(exc, Exception) else None
        self._owner._landed(self._agent_id, self.held, failure)


def _undelivered(exc: Exception) -> StoreUnavailableError:
    """Why held results were lost: the store's error, or one naming what else was raised."""
    if isinstance(exc, StoreUnavailableError):
        return exc
    return StoreUnavailableError(f"{type(exc).__name__} while sending results")


def _reset_in_child() -> None:
    """A forked child holds nothing: its parent sends what it held; no thread runs in it."""
    for held in list(_LIVE):
        held._reset()


def _flush_at_exit() -> None:
    for held in list(_LIVE):
        held._flush_all()


if hasattr(os, "register_at_fork"):  # not on Windows, which does not fork
    os.register_at_fork(after_in_child=_reset_in_child)
atexit.register(_flush_at_exit)
