"""The in-process store: agent states by identity, bounded in count and idle time."""

from __future__ import annotations

import contextlib
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any

from .._agents import agent_label
from .._calls import CallKey
from .._fork import fork_safe_lock
from .._idle import drop_idle
from .._state import AgentState, ToolResult
from .._weak_table import WeakIdentityTable
from ..breakers import Breaker
from ..breakers._rerun import is_note
from ..decision import Denial
from .base import ALLOWED, Outcome

__all__ = ["AgentRegistry", "MemoryStore", "agent_label"]


class AgentRegistry:
    """Maps agent identities to their state.

    A string (or any hashable value that cannot be weakly referenced) is kept in an
    LRU table: past ``max_agents`` the least recently seen goes, and so does any agent
    idle for ``idle_seconds``. An object that can be weakly referenced is keyed by its
    identity and its state goes away when the object does. Not thread-safe: the store
    holds its lock around every call.
    """

    def __init__(
        self,
        window: int,
        max_agents: int,
        idle_seconds: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._window = window
        self._max_agents = max_agents
        self._idle = idle_seconds
        self._clock = clock
        self._named: OrderedDict[Hashable, AgentState] = OrderedDict()
        self._objects: WeakIdentityTable[AgentState] = WeakIdentityTable()
        self._ticks = 0

    def __len__(self) -> int:
        return len(self._named) + len(self._objects)

    def get(self, agent: Any) -> AgentState | None:
        """The agent's state, created on first use; None for an identity it cannot key
        (unhashable and not weakly referenceable, or its ``__hash__``/``__eq__`` raises)."""
        if type(agent) is str:  # the common case first: no try needed, a str hashes safely
            return self.named(agent)
        try:
            if isinstance(agent, str):
                return self.named(agent)
            try:
                return self._get_object(agent)
            except TypeError:
                return self.named(agent)
        except Exception:  # the caller's object misbehaves: fail open
            return None

    def forget(self, agent: Any) -> None:
        """Drop the agent's state at once."""
        if self._objects.pop(agent):
            return
        with contextlib.suppress(Exception):
            self._named.pop(agent, None)

    def named(self, agent: Hashable) -> AgentState:
        """The state of an agent named by a hashable value (``get`` for any identity)."""
        now = self._clock()
        named = self._named
        state = named.get(agent)
        if state is not None and now - state.seen > self._idle:
            del named[agent]  # idle too long: forgotten, as on Redis, even before a sweep ran
            state = None
        if state is None:
            state = named[agent] = AgentState(self._window)
            if len(named) > self._max_agents:
                named.popitem(last=False)
        else:
            named.move_to_end(agent)
        state.seen = now
        self._ticks += 1
        if not self._ticks & 63:
            drop_idle(named, now, self._idle)
        return state

    def _get_object(self, agent: Any) -> AgentState:
        return self._objects.value(agent, lambda: AgentState(self._window))


class MemoryStore:
    """The default store (``memory://``): breakers evaluated on in-process agent state.

    ``decide`` evaluates every breaker and records the call only if all allow, under
    one lock, so concurrent checks for one agent give exact counts.
    """

    url = "memory://"

    def __init__(
        self,
        breakers: tuple[Breaker, ...],
        *,
        window: int,
        max_agents: int,
        idle_seconds: float,
        abort_after: int | None,
        clock: Callable[[], float] = time.monotonic,
        warners: tuple[Breaker, ...] = (),
    ) -> None:
        self._breakers = breakers
        self._warners = warners
        self._recorders = tuple(b for b in breakers if getattr(b, "records", True))
        # For agents that have reported no result yet: the breakers that can act before one.
        self._plain = tuple(b for b in breakers if not getattr(b, "awaits_results", False))
        self._plain_recorders = tuple(b for b in self._plain if getattr(b, "records", True))
        self._abort_after = abort_after
        self._agents = AgentRegistry(window, max_agents, idle_seconds, clock)
        self._lock = fork_safe_lock()

    def decide(self, agent: Any, call: CallKey) -> Outcome | None:
        """The breakers' verdict on ``call``; None when ``agent`` cannot be keyed."""
        with self._lock:
            agents = self._agents  # a str names most agents: its path without the dispatch
            state = agents.named(agent) if type(agent) is str else agents.get(agent)
            if state is None:
                return None
            reporting = state.results.reporting
            for breaker in self._breakers if reporting else self._plain:
                denial = breaker.check(state, call)
                if denial is not None:
                    breaker.refused(state, call)
                    state.results.denied(call.key)
                    return self._denied(state, denial)
            warning = self._warning(state, call) if self._warners else None
            state.calls += 1
            if state.denials_in_row and not is_note(call):  # a thought keeps denials in a row
                state.denials_in_row = 0
            for breaker in self._recorders if reporting else self._plain_recorders:
                breaker.record(state, call)
            state.results.allowed(call.key, state.window.pushed - 1)
        return ALLOWED if warning is None else Outcome(None, warning=warning)

    def _warning(self, state: AgentState, call: CallKey) -> Denial | None:
        """The first warner that would deny the allowed ``call``, judged before it is recorded."""
        for warner in self._warners:
            denial = warner.check(state, call)
            if denial is not None:
                return denial
        return None

    async def adecide(self, agent: Any, call: CallKey) -> Outcome | None:
        return self.decide(agent, call)

    def record_result(self, agent: Any, call: CallKey, result: ToolResult) -> bool:
        """Let every breaker observe what ``call`` returned; False when ``agent`` cannot be keyed."""
        with self._lock:
            agents = self._agents
            state = agents.named(agent) if type(agent) is str else agents.get(agent)
            if state is None:
                return False
            if state.results.arrived(call.key, state.window.pushed - 1) is None:
                return True  # not an allowed call awaiting its result (a denied one, or reported twice)
            for breaker in self._breakers:
                breaker.observe(state, call, result)
            state.results.settled(call.key, result.digest)
        return True

    def note_invalid(self, agent: Any) -> int | None:
        """The agent's invalid turns in a row, this one included; None when it cannot be keyed."""
        with self._lock:
            state = self._agents.get(agent)
            return None if state is None else state.note_invalid()

    async def anote_invalid(self, agent: Any) -> int | None:
        return self.note_invalid(agent)

    async def arecord_result(self, agent: Any, call: CallKey, result: ToolResult) -> bool:
        return self.record_result(agent, call, result)

    def _denied(self, state: AgentState, denial: Denial) -> Outcome:
        state.denials_in_row += 1
        first = denial.kind not in state.reported
        if first:
            state.reported = state.reported | {denial.kind}
        abort, denials = self._abort_after, state.denials_in_row
        return Outcome(denial, first, abort is not None and denials >= abort, denials == abort)

    def forget(self, agent: Any) -> None:
        with self._lock:
            self._agents.forget(agent)

    async def aforget(self, agent: Any) -> None:
        self.forget(agent)

    def agent_count(self) -> int:
        with self._lock:
            return len(self._agents)

    def flush(self) -> None:
        """Results are applied as they come in process: nothing is held."""

    async def aflush(self) -> None:
        """Results are applied as they come in process: nothing is held."""

    def close(self) -> None:
        """Nothing to release in process."""

    async def aclose(self) -> None:
        """Nothing to release in process."""
