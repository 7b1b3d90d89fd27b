"""Act on the incident log: interrupt tripped sub-agents, re-dispatch once, then give up.

A denial is not termination: a model in a true repetition loop ignores it and never
reports back. A parent that launched sub-agents runs a ``Supervisor`` over the guard's
``incident_log``. A sub-agent that tripped and has not delivered ``grace`` seconds after
the supervisor first read its incident is interrupted and its work item re-dispatched
once, with a note that the repeated line of inquiry is exhausted. A second trip on the
same work item means the item is probably unsatisfiable as stated: the supervisor gives
up and records the gap. Agents that delivered are left alone.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import math
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from .._shown import shown_tool
from ._reader import IncidentReader

__all__ = ["Action", "Gap", "IncidentReader", "Supervisor", "SupervisorPolicy", "Trip"]

logger = logging.getLogger("loopfuse")

DEFAULT_GRACE = 180.0


@dataclass(frozen=True, slots=True)
class Trip:
    """What an incident line says about a trip; never any argument value."""

    agent: str
    kind: str
    tool: str
    count: int
    limit: int

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> Trip | None:
        """The trip in an incident line, or None when the line names no agent id."""
        agent = record.get("agent")
        if not isinstance(agent, str) or not agent:
            return None
        return cls(
            agent,
            shown_tool(record.get("kind", "?")),
            shown_tool(record.get("tool", "?")),
            _int(record.get("count")),
            _int(record.get("limit")),
        )


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


ActionKind = Literal["interrupt", "redispatch", "give_up"]


@dataclass(frozen=True, slots=True)
class Action:
    """One thing the policy asks the host to do."""

    kind: ActionKind
    agent: str
    item: str
    note: str | None = None


@dataclass(frozen=True, slots=True)
class Gap:
    """A work item given up on: it tripped again after its re-dispatch (or could not be re-dispatched)."""

    item: str
    agent: str
    trips: tuple[Trip, ...]
    note: str
    at: float


@dataclass
class _Run:
    item: str
    trip: Trip | None = None
    delivered: bool = False


@dataclass
class _Item:
    trips: list[Trip] = field(default_factory=list)
    redispatched: bool = False
    closed: bool = False


def redispatch_note(trip: Trip) -> str:
    return (
        f"A previous attempt at this task was stopped: it kept repeating the same "
        f"{trip.tool} call ({trip.kind}, {trip.count}/{trip.limit}) without making progress. "
        "That line of inquiry is exhausted; do not repeat it. Take a different approach, "
        "or report what you found and what is still missing."
    )


def give_up_note(item: str, trips: list[Trip]) -> str:
    seen = "; ".join(f"{t.tool} {t.kind} {t.count}/{t.limit}" for t in trips)
    how = (
        "twice, the second time after being re-dispatched"
        if len(trips) > 1
        else "and cannot be re-dispatched"
    )
    return (
        f"Work item {item} tripped the loop guard {how} ({seen}). It is probably unsatisfiable "
        "as stated (a false premise or missing data): retrying stopped. Record it as a gap."
    )


class SupervisorPolicy:
    """The decisions alone, with time passed in: no file, no callback, no clock.

    A run is one agent id. Its work item is the id it was first seen under, or the item
    of the run it re-dispatches (see ``redispatched``).
    """

    def __init__(self, grace: float = DEFAULT_GRACE, *, can_redispatch: bool = True) -> None:
        _check_seconds("grace", grace, above_zero=False)
        self.grace = grace
        self.can_redispatch = can_redispatch
        self._runs: dict[str, _Run] = {}
        self._items: dict[str, _Item] = {}
        self._pending: dict[str, float] = {}  # tripped runs awaiting action, oldest first

    def tripped(self, trip: Trip, now: float) -> None:
        """An incident was read at ``now``; only a run's first incident starts its grace."""
        run = self._run(trip.agent)
        item = self._items[run.item]
        if run.delivered or run.trip is not None or item.closed:
            return
        run.trip = trip
        item.trips.append(trip)
        self._pending[trip.agent] = now

    def delivered(self, agent: str) -> None:
        """The run reported back: it is left alone from now on."""
        self._run(agent).delivered = True
        self._pending.pop(agent, None)

    def due(self, now: float) -> list[Action]:
        """The actions whose grace has run out, in the order to perform them; each run's
        actions are returned once (report back with ``interrupted``/``redispatched``/``gave_up``)."""
        due = []
        for agent, tripped_at in self._pending.items():
            if now - tripped_at < self.grace:
                break
            due.append(agent)
        actions: list[Action] = []
        for agent in due:
            del self._pending[agent]
            actions += self._actions(agent, self._runs[agent])
        return actions

    def next_due(self, now: float) -> float | None:
        """Seconds until the next action falls due (0 when one is due), None when none waits."""
        oldest = next(iter(self._pending.values()), None)
        return None if oldest is None else max(0.0, oldest + self.grace - now)

    def interrupted(self, agent: str) -> None:
        self._handled(agent)

    def redispatched(self, agent: str, new_agent: str | None) -> str:
        """The item was re-dispatched as ``new_agent`` (None: under the same id)."""
        run = self._handled(agent)
        self._items[run.item].redispatched = True
        new_id = agent if new_agent is None else new_agent
        self._runs[new_id] = _Run(item=run.item)
        return new_id

    def gave_up(self, agent: str, note: str, now: float) -> Gap:
        run = self._handled(agent)
        item = self._items[run.item]
        item.closed = True
        return Gap(run.item, agent, tuple(item.trips), note, now)

    def item_of(self, agent: str) -> str | None:
        run = self._runs.get(agent)
        return None if run is None else run.item

    def forget(self, agent: str) -> None:
        """Drop a run (and its item once no run refers to it)."""
        run = self._runs.pop(agent, None)
        self._pending.pop(agent, None)
        if run is not None and all(r.item != run.item for r in self._runs.values()):
            self._items.pop(run.item, None)

    def _run(self, agent: str) -> _Run:
        run = self._runs.get(agent)
        if run is None:
            run = self._runs[agent] = _Run(item=agent)
            self._items.setdefault(agent, _Item())
        return run

    def _handled(self, agent: str) -> _Run:
        self._pending.pop(agent, None)
        return self._runs[agent]

    def _actions(self, agent: str, run: _Run) -> list[Action]:
        item = self._items[run.item]
        assert run.trip is not None
        interrupt = Action("interrupt", agent, run.item)
        if item.redispatched or not self.can_redispatch:
            return [interrupt, Action("give_up", agent, run.item, give_up_note(run.item, item.trips))]
        return [interrupt, Action("redispatch", agent, run.item, redispatch_note(run.trip))]


Interrupt = Callable[[str], Any]
Redispatch = Callable[[str, str], Any]
GiveUp = Callable[[str, str], Any]


class Supervisor:
    """Reads ``incident_log`` incrementally and applies the policy through host callbacks.

    ``interrupt(agent)`` stops a run; ``redispatch(agent, note)`` starts the work item
    again with ``note`` added to its brief and may return the id the new run uses (else
    the same id is reused); ``give_up(agent, note)`` closes the item. Callbacks may be
    coroutine functions when the host uses ``apoll``/``run``. A callback that raises is
    logged and the policy moves on. Without ``redispatch`` an item is given up on its
    first trip. Incidents already in the file when the supervisor starts are ignored
    unless ``from_start=True``: create it before dispatching the sub-agents.
    """

    def __init__(
        self,
        incident_log: str | os.PathLike[str],
        *,
        interrupt: Interrupt | None = None,
        redispatch: Redispatch | None = None,
        give_up: GiveUp | None = None,
        grace: float = DEFAULT_GRACE,
        clock: Callable[[], float] = time.monotonic,
        from_start: bool = False,
    ) -> None:
        self.policy = SupervisorPolicy(grace, can_redispatch=redispatch is not None)
        self.reader = IncidentReader(incident_log, from_start=from_start)
        self.gaps: list[Gap] = []
        self.unidentified = 0
        self._interrupt, self._redispatch, self._give_up = interrupt, redispatch, give_up
        self._clock = clock
        self._stopping = False
        self._lock = threading.Lock()  # sub-agent threads may call ``delivered``

    def delivered(self, agent: str) -> None:
        """Call when ``agent`` reported back; the supervisor leaves it alone."""
        with self._lock:
            self.policy.delivered(agent)

    def forget(self, agent: str) -> None:
        """Drop what the supervisor keeps for a finished run (long-lived parents)."""
        with self._lock:
            self.policy.forget(agent)

    def poll(self) -> list[Action]:
        """Read new incidents and perform what is due; call it on each of the parent's turns."""
        done = []
        for action in self._read_and_decide():
            self._finish(action, _settled(self._call(action), action))
            done.append(action)
        return done

    async def apoll(self) -> list[Action]:
        """``poll`` for async hosts: awaits callbacks that return awaitables."""
        done = []
        for action in self._read_and_decide():
            result = self._call(action)
            if inspect.isawaitable(result):
                result = await _guarded_await(result, action)
            self._finish(action, result)
            done.append(action)
        return done

    async def run(self, interval: float = 1.0) -> None:
        """Poll until ``stop()`` or cancellation, sleeping at most ``interval`` seconds.

        A ``stop()`` made before the loop starts ends it at once; each end of the loop
        clears the request, so the supervisor can be run again."""
        _check_seconds("interval", interval, above_zero=True)
        try:
            while not self._stopping:
                await self.apoll()
                wait = self.policy.next_due(self._clock())
                await asyncio.sleep(interval if wait is None else min(interval, max(wait, 0.01)))
        finally:
            self._stopping = False

    def stop(self) -> None:
        """End ``run`` when its current poll and sleep are over, or at once if it has not started yet."""
        self._stopping = True

    def close(self) -> None:
        self.reader.close()

    def _read_and_decide(self) -> list[Action]:
        with self._lock:
            return self._read_and_decide_locked()

    def _read_and_decide_locked(self) -> list[Action]:
        now = self._clock()
        for record in self.reader.read():
            trip = Trip.from_record(record)
            if trip is None:
                self.unidentified += 1
            else:
                self.policy.tripped(trip, now)
        return self.policy.due(now)

    def _call(self, action: Action) -> Any:
        callback = {"interrupt": self._interrupt, "redispatch": self._redispatch, "give_up": self._give_up}[
            action.kind
        ]
        if callback is None:
            return None
        args = (action.agent,) if action.kind == "interrupt" else (action.agent, action.note)
        try:
            return callback(*args)
        except Exception:
            logger.exception("loopfuse: supervisor callback %s failed for %s", action.kind, action.agent)
            return None

    def _finish(self, action: Action, result: Any) -> None:
        with self._lock:
            self._finish_locked(action, result)

    def _finish_locked(self, action: Action, result: Any) -> None:
        if self.policy.item_of(action.agent) is None:
            return  # forgotten meanwhile, by a callback or another thread: nothing left to record
        if action.kind == "interrupt":
            self.policy.interrupted(action.agent)
        elif action.kind == "redispatch":
            self.policy.redispatched(action.agent, None if result is None else str(result))
        else:
            assert action.note is not None
            self.gaps.append(self.policy.gave_up(action.agent, action.note, self._clock()))


def _check_seconds(name: str, value: float, *, above_zero: bool) -> None:
    """ValueError unless ``value`` is a finite number of seconds, at least 0 (above 0 if asked)."""
    if not math.isfinite(value) or value < 0 or (above_zero and value == 0):
        allowed = "above 0" if above_zero else "at least 0"
        raise ValueError(f"{name} must be a finite number of seconds {allowed}, got {value!r}")


def _settled(result: Any, action: Action) -> Any:
    """A sync poll cannot await: an awaitable result is dropped with an error logged."""
    if not inspect.isawaitable(result):
        return result
    logger.error("loopfuse: supervisor callback %s is async; use Supervisor.apoll or run", action.kind)
    if inspect.iscoroutine(result):
        result.close()
    return None


async def _guarded_await(result: Any, action: Action) -> Any:
    try:
        return await result
    except Exception:
        logger.exception("loopfuse: supervisor callback %s failed for %s", action.kind, action.agent)
        return None
