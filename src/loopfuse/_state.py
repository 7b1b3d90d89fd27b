"""Per-agent state kept by the in-process store: small, bounded, O(1) per call."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Any, NamedTuple, TypeVar

from ._rings import CountingWindow, RecentDigests, RecentKeys

T = TypeVar("T")

__all__ = [
    "AgentResults",
    "AgentState",
    "CountingWindow",
    "CycleTrack",
    "RecentDigests",
    "ResultBook",
    "ToolResult",
]


class ToolResult(NamedTuple):
    """What the guard keeps of one result: digests only, never the result. (Immutable; a
    named tuple, made once per result: a frozen dataclass took four times as long.)"""

    digest: int
    ok: bool | None
    error: int


class ResultBook:
    """The last result digest of each recent call key, and where its latest unsettled
    window entry sits; both bounded (see ``RecentDigests``; at most 32 pending)."""

    __slots__ = ("_pending", "_size", "last")

    def __init__(self, size: int) -> None:
        self._size = size
        self.last = RecentDigests(size)
        self._pending: dict[int, int] = {}

    def pushed(self, key: int, index: int) -> None:
        """``key`` entered a window as its ``index``-th entry, its result still unknown.

        Results arrive right after their call, so only the last few pending entries are
        kept; an entry whose result comes later than that stays counted as a plain call."""
        _put(self._pending, key, index, min(self._size, _PENDING))

    def take_pending(self, key: int) -> int | None:
        return self._pending.pop(key, None)

    def remember(self, key: int, result: int) -> None:
        self.last.put(key, result)


RECENT_RESULTS = 16  # results an agent's new result is compared with (stores/lua/observe.lua: ld)


class AgentResults(ResultBook):
    """The one place that settles which call a result belongs to, for one agent.

    Until the agent's first result only its newest allowed call awaits one (``awaited``);
    from then on (``reporting``) each allowed call awaits its own, kept as pending window
    indices. ``index`` is the window index of the call whose result breakers observe now;
    ``recent`` the digests of the agent's last ``RECENT_RESULTS`` results."""

    __slots__ = ("awaited", "index", "recent", "reporting")

    def __init__(self, size: int) -> None:
        super().__init__(size)
        self.reporting = False
        self.awaited = 0
        self.index = -1
        self.recent = RecentKeys(RECENT_RESULTS)

    def allowed(self, key: int, index: int) -> None:
        """The call ``key`` was allowed as the window's ``index``-th entry: it awaits its result."""
        if self.reporting:
            self.pushed(key, index)
        else:
            self.awaited = key

    def denied(self, key: int) -> None:
        """The call ``key`` was denied: a result of ``key`` reported from now on is the
        denied attempt's, so no earlier allowed call of ``key`` awaits it any more."""
        if not self.reporting:
            if key == self.awaited:
                self.awaited = 0
        else:
            self.take_pending(key)

    def arrived(self, key: int, newest: int) -> int | None:
        """The window index of the allowed call ``key`` whose result this is (``newest``: the
        newest allowed call's), taken off the awaited calls and kept in ``index``; None when
        no allowed call of ``key`` awaits a result.

        Before the agent's first result, a result for another call than the newest (calls run
        side by side, their results reported after them all) is not placed, but from then on
        each call awaits its own: an agent whose every turn runs two calls would otherwise
        never have a result counted."""
        if not self.reporting:
            found = newest if key == self.awaited else None
            self.awaited = 0
            self.reporting = found is None
        else:
            found = self.take_pending(key)
        if found is not None:
            self.index = found
        return found

    def settled(self, key: int, digest: int) -> None:
        """The breakers observed ``key``'s result: it is the call's latest from now on."""
        self.remember(key, digest)
        self.recent.add(digest)
        self.reporting = True

    def found(self, key: int, digest: int) -> bool:
        """Whether the result ``digest`` of ``key`` is a finding: a call the agent has no
        recent result of, answering what none of its last results did (before ``settled``)."""
        return digest not in self.recent and not self.last.holds(key)  # the shorter search first


_PENDING = 32


def _put(table: dict[int, int], key: int, value: int, bound: int) -> None:
    table.pop(key, None)
    table[key] = value
    if len(table) > bound:
        del table[next(iter(table))]


class CycleTrack:
    """The last ``k + 1`` call keys with their result digests (0 until known) and, per
    period ``p`` in 2..k, how many trailing calls repeat the call ``p`` before them."""

    __slots__ = ("history", "matches", "results")

    def __init__(self, k: int) -> None:
        self.history: deque[int] = deque(maxlen=k + 1)
        self.results: deque[int] = deque(maxlen=k + 1)
        self.matches = [0] * (k + 1)


class AgentState:
    """Everything the in-process store keeps for one agent: the bookkeeping every breaker
    shares (the window, the results, the calls made and denied in a row) and, in ``units``,
    each breaker's own slice (its module's small slotted class), made on first use."""

    __slots__ = (
        "__weakref__",
        "calls",
        "denials_in_row",
        "invalid",
        "invalid_at",
        "reported",
        "results",
        "seen",
        "units",
        "window",
    )

    def __init__(self, window: int) -> None:
        self.calls = 0
        self.window = CountingWindow(window)
        self.results = AgentResults(window)
        self.denials_in_row = 0
        self.invalid = 0  # invalid turns in a row, since the allowed call number invalid_at
        self.invalid_at = 0
        self.reported: frozenset[str] = frozenset()
        self.seen = 0.0
        self.units: dict[str, Any] | None = None  # each registered breaker's own slice, by kind

    def unit(self, kind: str, make: Callable[[], T]) -> T:
        """The slice of state the breaker ``kind`` keeps for this agent, made on first use."""
        units = self.units
        if units is None:
            units = self.units = {}
        mine: T | None = units.get(kind)  # typed here, not by cast(): a call on every check
        if mine is None:
            mine = units[kind] = make()
        return mine

    def note_invalid(self) -> int:
        """One more invalid turn: the streak since the last allowed call, this one included."""
        if self.invalid_at != self.calls:
            self.invalid, self.invalid_at = 0, self.calls
        self.invalid += 1
        return self.invalid

    @property
    def reporting(self) -> bool:
        """Whether the agent has reported a result (results are then awaited per call)."""
        return self.results.reporting

    @property
    def result_index(self) -> int:
        """The window index of the call whose result the breakers observe now."""
        return self.results.index
