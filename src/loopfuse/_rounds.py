"""Rounds: the calls one model turn issues together (parallel tool calls).

A host that knows the turn passes ``round=`` to ``Guard.check``. Identical calls in one round
count once: the second gets the first one's decision and reaches no breaker. A round that
repeats the previous round's whole set of calls, in any order, and in which no call's result
changed (``observed``), is a repeated round; once a set of two or more calls has run
``cycle.min_repeats`` rounds in a row, the next round's calls of that set are denied as a cycle. Rounds are kept in this process (a turn is issued by one host process),
bounded per agent and in the number of agents, and an agent idle for ``agent_idle_seconds``
loses them as it loses its state; an agent object (a host's run) is never kept alive by them,
and its rounds go with it.
"""

from __future__ import annotations

import asyncio
import time
import weakref
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Hashable
from typing import Any

from ._fork import fork_safe_lock
from ._idle import drop_idle
from .decision import Decision, Denial
from .stores.base import Outcome

__all__ = ["Rounds"]

_ROUND_CALLS = 256  # distinct calls followed per round; past them, calls count as usual


class _AgentRounds:
    __slots__ = (
        "alock",
        "current",
        "decisions",
        "denials",
        "first_denied",
        "lock",
        "previous",
        "progressed",
        "ref",
        "results",
        "round",
        "seen",
        "streak",
    )

    def __init__(self, round_id: Hashable, ref: weakref.ref[Any] | None) -> None:
        self.ref = ref  # the agent, for an agent kept by identity (see ``_key``)
        self.lock = fork_safe_lock()  # held across one check of this agent, so that identical
        self.alock: tuple[asyncio.AbstractEventLoop, asyncio.Lock] | None = None  # calls of one
        # round are decided one at a time (async: a lock of the running event loop)
        self.round = round_id
        self.decisions: dict[int, Decision] = {}
        self.current: set[int] = set()
        self.previous: frozenset[int] = frozenset()
        self.streak = 0  # rounds in a row, up to the previous one, whose set equals the one before
        self.results: dict[int, int] = {}  # each call's latest result digest (bounded)
        self.progressed = False  # a call of this round returned a result new for that call
        self.first_denied = False
        self.denials = 0  # the agent's calls denied in a row, of those checked with a round
        self.seen = 0.0

    def start(self, round_id: Hashable) -> None:
        """Close the current round and start ``round_id``. A round none of whose calls ran
        does not count (as a denied call never counts): it neither extends nor breaks the
        streak, so repeating a denied round is denied again."""
        if self.current:
            same = self.current == self.previous and not self.progressed
            self.streak = self.streak + 1 if same else 0
            self.previous = frozenset(self.current)
        self.round, self.current, self.decisions, self.progressed = round_id, set(), {}, False

    def observe(self, key: int, digest: int) -> None:
        """A result of call ``key``: a result it did not give last time is progress (a debugger's
        step and its variables, a move and what it shows), so its round repeats nothing."""
        if self.results.get(key) != digest:
            self.progressed = True
            if key in self.results or len(self.results) < _ROUND_CALLS:
                self.results[key] = digest


Deny = Callable[[Outcome], Decision]


class Rounds:
    """Each agent's current round, for at most ``max_agents`` agents (least recent go first)."""

    def __init__(
        self,
        max_agents: int,
        min_repeats: int | None,
        abort_after: int = 0,
        idle_seconds: float = float("inf"),
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._agents: OrderedDict[Hashable, _AgentRounds] = OrderedDict()
        self._max = max_agents
        self._idle, self._clock, self._entries = idle_seconds, clock, 0
        self._min_repeats = min_repeats  # None: repeated rounds are never denied (cycle off)
        self._abort_after = abort_after  # denials in a row that escalate; 0: never
        self._lock = fork_safe_lock()

    def __len__(self) -> int:
        """How many agents' rounds are kept."""
        return len(self._agents)

    def check(
        self, agent: Any, round_id: Hashable, key: int, decide: Callable[[], Decision], deny: Deny
    ) -> Decision:
        """``decide()`` unless ``key`` was decided in this round already or repeats a repeated round."""
        rounds = self._enter(agent, round_id)
        if rounds is None:
            return decide()
        with rounds.lock:
            if not _began(rounds, round_id):
                return decide()
            settled = self._settled(rounds, key, deny)  # a Decision is falsy when denied: no `or`
            return settled if settled is not None else self._kept(rounds, key, decide())

    async def acheck(
        self, agent: Any, round_id: Hashable, key: int, decide: Callable[[], Awaitable[Decision]], deny: Deny
    ) -> Decision:
        """``check`` for async hosts: the agent's checks wait on an asyncio lock, never blocking."""
        rounds = self._enter(agent, round_id)
        if rounds is None:
            return await decide()
        loop = asyncio.get_running_loop()
        if rounds.alock is None or rounds.alock[0] is not loop:
            rounds.alock = (loop, asyncio.Lock())
        async with rounds.alock[1]:
            if not _began(rounds, round_id):
                return await decide()
            settled = self._settled(rounds, key, deny)
            return settled if settled is not None else self._kept(rounds, key, await decide())

    def _settled(self, rounds: _AgentRounds, key: int, deny: Deny) -> Decision | None:
        """The decision this round already has for ``key``, or a repeated round's denial."""
        known = rounds.decisions.get(key)
        if known is not None:
            return known
        repeated = self.repeated(rounds, key)
        return None if repeated is None else self._kept(rounds, key, deny(repeated))

    def _kept(self, rounds: _AgentRounds, key: int, decision: Decision) -> Decision:
        self.keep(rounds, key, decision)
        return decision

    def _enter(self, agent: Any, round_id: Hashable) -> _AgentRounds | None:
        with self._lock:
            return self.enter(agent, round_id)

    def enter(self, agent: Any, round_id: Hashable) -> _AgentRounds | None:
        """The agent's rounds (a new agent's in ``round_id``; the caller moves a known agent to
        ``round_id`` under its lock, ``_began``); None when the agent or round cannot be keyed."""
        try:
            key = _key(agent)
            hash(round_id)
            rounds, now = self._agents.get(key), self._clock()
            if rounds is not None and rounds.ref is not None and rounds.ref() is not agent:
                rounds = None  # another object that had the same id
            if rounds is not None and now - rounds.seen > self._idle:
                rounds = None  # idle too long: its rounds are forgotten, as its state is
            if rounds is None:
                rounds = self._agents[key] = _AgentRounds(round_id, self._ref(agent, key))
                if len(self._agents) > self._max:
                    self._agents.popitem(last=False)
            self._agents.move_to_end(key)
            rounds.seen = now
            self._expire_idle(now)
            return rounds
        except Exception:  # an unhashable agent or round id, or one whose __eq__ raises
            return None

    def _expire_idle(self, now: float) -> None:
        """Every 64th entry, drop at most 64 agents idle past ``idle_seconds``, the least recent
        first (the agent just entered is the most recent, and is never dropped)."""
        self._entries += 1
        if not self._entries & 63:
            drop_idle(self._agents, now, self._idle)

    def repeated(self, rounds: _AgentRounds, key: int) -> Outcome | None:
        """A denial for ``key`` when its round repeats a set that already ran ``min_repeats``
        rounds in a row: whether it is the agent's first such denial, and whether the agent's
        denials in a row (of either kind: the store's or a round's) now escalate."""
        limit = self._min_repeats
        if limit is None or key not in rounds.previous or rounds.streak + 1 < limit:
            return None
        if len(rounds.previous) < 2:  # one call again and again is the window's and the brake's
            return None
        first, rounds.first_denied = not rounds.first_denied, True
        denial = Denial("cycle", rounds.streak + 1, limit, "cycle.min_repeats")
        in_row, abort = rounds.denials + 1, self._abort_after
        return Outcome(denial, first, 0 < abort <= in_row, in_row == abort)

    @staticmethod
    def keep(rounds: _AgentRounds, key: int, decision: Decision) -> None:
        """``key`` ran (or was denied) in this round: a second identical call gets ``decision``."""
        rounds.denials = 0 if decision.allowed else rounds.denials + 1
        if len(rounds.decisions) < _ROUND_CALLS:
            rounds.decisions[key] = decision
            if decision.allowed:
                rounds.current.add(key)

    def _ref(self, agent: Any, key: Hashable) -> weakref.ref[Any] | None:
        """A weak reference to an agent kept by identity, whose death drops its rounds (as the
        in-memory store drops its state: a host's run object takes its state with it)."""
        if key is agent:
            return None
        agents = self._agents

        def drop(ref: weakref.ref[Any]) -> None:
            current = agents.get(key)
            if current is not None and current.ref is ref:
                agents.pop(key, None)

        return weakref.ref(agent, drop)

    def observed(self, agent: Any, key: int, digest: int) -> None:
        """A result of ``agent``'s call ``key`` (see ``_AgentRounds.observe``); nothing for an
        agent that checks no call with a round."""
        if not self._agents:
            return
        try:
            rounds = self._agents.get(_key(agent))
            if rounds is not None and (rounds.ref is None or rounds.ref() is agent):
                rounds.observe(key, digest)
        except Exception:  # an agent whose __eq__ raises: its rounds were never kept
            return

    def forget(self, agent: Any) -> None:
        try:
            self._agents.pop(_key(agent), None)
        except Exception:
            return


def _began(rounds: _AgentRounds, round_id: Hashable) -> bool:
    """The agent's rounds moved to ``round_id`` (by the caller holding its lock, so that no
    decision of the round before lands in it); False for a round id whose ``__eq__`` raises."""
    try:
        if rounds.round != round_id:
            rounds.start(round_id)
    except Exception:
        return False
    return True


def _key(agent: Any) -> Hashable:
    """An object that can be weakly referenced is kept by identity, never alive; any other
    agent (a str, a number) by value."""
    return ("object", id(agent)) if type(agent).__weakrefoffset__ else agent
