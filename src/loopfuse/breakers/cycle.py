"""The cycle breaker: a block of 2..k distinct calls repeated back to back."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from .._calls import CallKey
from .._state import AgentState, CycleTrack, ToolResult
from ..checks import check_bool, check_int, fail
from ..decision import Denial, Kind
from ._text import CHANGE
from ._warn import lowered

if TYPE_CHECKING:
    from ..config import GuardConfig

__all__ = ["CycleBreaker", "CycleConfig"]


@dataclass(frozen=True)
class CycleConfig:
    """Section ``cycle``: a block of 2..``max_period`` distinct calls run ``min_repeats``
    times back to back; the next call continuing it is denied."""

    enabled: bool = True
    max_period: int = 4
    min_repeats: int = 3
    result_aware: bool = True
    only_with_results: bool = True
    warn_at: int = 0

    def __post_init__(self) -> None:
        s = "cycle"
        warn_at = self.warn_at  # 0 (off), then 2 on; false and 0.0 are errors, not 0
        if isinstance(warn_at, bool) or not isinstance(warn_at, int) or warn_at < 0 or warn_at == 1:
            raise fail(s, "warn_at", warn_at, "0 (off) or an integer >= 2")
        for key in ("enabled", "result_aware", "only_with_results"):
            check_bool(s, key, getattr(self, key))
        period = self.max_period
        if isinstance(period, bool) or not isinstance(period, int) or not 2 <= period <= 16:
            raise fail(s, "max_period", period, "an integer from 2 to 16")
        check_int(s, "min_repeats", self.min_repeats, 2)


class CycleBreaker:
    """Deny the call that would run a block of ``p`` distinct calls (2 <= p <= ``max_period``)
    once more after it ran ``min_repeats`` times back to back (A,B,A,B,A,B, then A).

    Per call it updates, for each period ``p``, how many trailing calls repeat the call
    ``p`` before them: O(max_period) time and memory, whatever the history's length. With
    ``result_aware``, a call whose reported result differs from the result of the call
    ``p`` before it breaks the cycle of period ``p``: new results are progress. With
    ``only_with_results``, a block is judged only once every call in it has a reported
    result, and calls are tracked from the agent's first result on (a host that never
    reports results is never denied by this breaker, and pays nothing for it).
    """

    kind: Kind = "cycle"
    section: ClassVar[str] = "cycle"
    config_type: ClassVar[type | None] = CycleConfig
    lua: ClassVar[str] = "fragment"  # stores/lua/breakers/cycle.lua
    MESSAGES: ClassVar[dict[str, str]] = {
        "cycle.min_repeats": (
            "the same sequence of calls ran {count} times back to back (cycle min_repeats {limit}). " + CHANGE
        ),
    }

    def __init__(
        self,
        max_period: int = 4,
        min_repeats: int = 3,
        *,
        result_aware: bool = True,
        only_with_results: bool = False,
    ) -> None:
        self.max_period = max_period
        self.min_repeats = min_repeats
        self.result_aware = result_aware
        self.only_with_results = only_with_results

    @property
    def awaits_results(self) -> bool:
        """With ``only_with_results`` nothing happens before the agent's first result."""
        return self.only_with_results

    @classmethod
    def from_config(cls, config: GuardConfig) -> CycleBreaker | None:
        cy = config.cycle
        if not cy.enabled:
            return None
        flags = {"result_aware": cy.result_aware, "only_with_results": cy.only_with_results}
        return cls(cy.max_period, cy.min_repeats, **flags)

    def check(self, state: AgentState, call: CallKey) -> Denial | None:
        track = state.units.get("cycle") if state.units else None
        if track is None:
            return None
        history, matches, key = track.history, track.matches, call.key
        for p in range(2, min(self.max_period, len(history)) + 1):
            run = matches[p] + 1
            if history[-p] == key and run > p * (self.min_repeats - 1) and self._judged(track, p):
                return Denial("cycle", (run - 1 + p) // p, self.min_repeats, "cycle.min_repeats")
        return None

    def record(self, state: AgentState, call: CallKey) -> None:
        if self.only_with_results and not state.results.reporting:
            return  # no block could be judged yet: no bookkeeping until results arrive
        track = state.units.get("cycle") if state.units else None
        if track is None:
            track = state.unit("cycle", lambda: CycleTrack(self.max_period))
        history, matches, key = track.history, track.matches, call.key
        for p in range(2, self.max_period + 1):
            matches[p] = matches[p] + 1 if len(history) >= p and history[-p] == key else 0
        history.append(key)
        track.results.append(0)

    def refused(self, state: AgentState, call: CallKey) -> None:
        """A refused call changes nothing."""

    def observe(self, state: AgentState, call: CallKey, result: ToolResult) -> None:
        track = state.units.get("cycle") if state.units else None
        if track is None and self.only_with_results and not state.results.reporting:
            track = state.unit("cycle", lambda: CycleTrack(self.max_period))  # the agent's first result: its
            track.history.append(call.key)  # call, the newest, starts the tracked calls
            track.results.append(0)
        if not self.result_aware or track is None or not track.history or track.history[-1] != call.key:
            return
        results = track.results
        results[-1] = result.digest
        for p in range(2, min(self.max_period, len(results) - 1) + 1):
            earlier = results[-1 - p]
            if earlier and earlier != result.digest:
                track.matches[p] = 0

    def _judged(self, track: CycleTrack, p: int) -> bool:
        """Whether the last ``p`` calls are distinct (and, if required, have results)."""
        if len({track.history[-i] for i in range(1, p + 1)}) != p:
            return False
        return not self.only_with_results or all(track.results[-i] for i in range(1, p + 1))

    def allowed_repeats(self) -> int | None:
        """One call again and again is no block of distinct calls."""
        return None

    def warned(self, warn_at: int) -> CycleBreaker:
        """This breaker with its limits at most ``warn_at``: where it denies, the guard warns."""
        return lowered(self, ("min_repeats",), warn_at)

    def lua_settings(self) -> tuple[int, ...]:
        return (self.max_period, self.min_repeats, int(self.result_aware), int(self.only_with_results))

    def script_rule(self, code: str, tool: str) -> str:
        return "cycle.min_repeats"
