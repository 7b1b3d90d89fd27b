"""The rapid-refill tracker: host-neutral state of one session's automatic compactions.

A compaction summarizes the conversation when it passes a threshold and keeps a recent
tail. When something oversized sits in that tail, the context is over the threshold again
right after each compaction: every step then pays for another summarization call. The
tracker measures the gap between compactions in tool turns (assistant messages carrying
at least one tool call) and refuses a compaction, before it is attempted, once too many
rapid refills happened in a row. Pure code: no host, no I/O, no clock but tool turns.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from ..checks import check_int

__all__ = ["CompactionGate", "CompactionStatus", "RapidRefillTracker"]

_SECTION = "compaction"
_KEPT_GAPS = 5


@dataclass(frozen=True, slots=True)
class CompactionGate:
    """The answer to "may this compaction run?", taken before the summarization call.

    ``gap`` is the number of tool turns since the last compaction (``None`` for the first
    one of the session). Pass an open gate to ``commit_compaction`` once the compaction
    really happened; a blocked gate is never committed.
    """

    blocked: bool
    projected_consecutive_rapid_refills: int
    reason: str
    rapid: bool = False
    gap: int | None = None


@dataclass(frozen=True, slots=True)
class CompactionStatus:
    """A snapshot of a tracker: counters, the latest gaps, and the latch with its reason."""

    tool_turn_threshold: int
    max_consecutive_rapid_refills: int
    tool_turns: int
    compactions: int
    manual_compactions: int
    consecutive_rapid_refills: int
    refusals: int
    tool_turns_since_last_compaction: int | None
    last_gaps: tuple[int, ...]
    latched: bool
    latch_reason: str | None


class RapidRefillTracker:
    """Counts tool turns and compactions of one session and latches on a rapid-refill loop.

    A compaction needed after fewer than ``tool_turn_threshold`` tool turns since the last
    one is a rapid refill (exactly ``tool_turn_threshold`` is not); the first compaction of a
    session never is. When the projected number of rapid refills in a row reaches
    ``max_consecutive_rapid_refills``, ``gate()`` is blocked and stays blocked until
    ``reset()`` or ``note_manual_compaction()``. One tracker per session; not thread-safe.
    """

    def __init__(self, tool_turn_threshold: int = 2, max_consecutive_rapid_refills: int = 3) -> None:
        self.tool_turn_threshold = check_int(_SECTION, "tool_turn_threshold", tool_turn_threshold, 1)
        self.max_consecutive_rapid_refills = check_int(
            _SECTION, "max_consecutive_rapid_refills", max_consecutive_rapid_refills, 1
        )
        self._tool_turns = 0
        self._compactions = 0
        self._manual_compactions = 0
        self._last_gaps: deque[int] = deque(maxlen=_KEPT_GAPS)
        self._clear()

    def _clear(self) -> None:
        self._last_compaction_turn: int | None = None
        self._consecutive_rapid = 0
        self._latch_reason: str | None = None
        self._latched_projected = 0
        self._refusals = 0

    @property
    def latched(self) -> bool:
        """True once a gate was blocked, until ``reset()`` or ``note_manual_compaction()``."""
        return self._latch_reason is not None

    def note_tool_turn(self) -> None:
        """Count one assistant message that carried at least one tool call."""
        self._tool_turns += 1

    def gate(self) -> CompactionGate:
        """Whether a compaction needed now may run. A blocked answer latches the tracker."""
        if self._latch_reason is not None:
            return self._refuse(self._latched_projected, f"still stopped: {self._latch_reason}")
        gap = self._gap()
        rapid = gap is not None and gap < self.tool_turn_threshold
        projected = self._consecutive_rapid + 1 if rapid else 0
        if projected >= self.max_consecutive_rapid_refills:
            return self._trip(projected, self._loop_reason(projected, gap))
        return CompactionGate(False, projected, self._open_reason(projected, gap), rapid, gap)

    def trip(self, reason: str) -> CompactionGate:
        """Refuse and latch for a reason the host found itself (e.g. a compaction it predicts futile)."""
        if self._latch_reason is not None:
            return self.gate()
        return self._trip(self._consecutive_rapid, _reason_text(reason))

    def commit_compaction(self, gate: CompactionGate) -> None:
        """Record that the compaction ``gate`` allowed really happened."""
        if gate.blocked:
            raise ValueError("a blocked compaction gate cannot be committed: the compaction was refused")
        self._consecutive_rapid = gate.projected_consecutive_rapid_refills
        self._mark_compaction()

    def note_manual_compaction(self) -> None:
        """A user-initiated compaction happened: new information, so the latch and count re-arm."""
        self._latch_reason = None
        self._consecutive_rapid = 0
        self._manual_compactions += 1
        self._mark_compaction()

    def reset(self) -> None:
        """Clear the rapid count, the last-compaction marker, the latch and the refusal count.

        The tool-turn clock is never rewound: rewinding it would make the next gap look healthy.
        """
        self._clear()

    def status(self) -> CompactionStatus:
        """A snapshot of the counters, the latest gaps and the latch."""
        return CompactionStatus(
            tool_turn_threshold=self.tool_turn_threshold,
            max_consecutive_rapid_refills=self.max_consecutive_rapid_refills,
            tool_turns=self._tool_turns,
            compactions=self._compactions,
            manual_compactions=self._manual_compactions,
            consecutive_rapid_refills=self._consecutive_rapid,
            refusals=self._refusals,
            tool_turns_since_last_compaction=self._gap(),
            last_gaps=tuple(self._last_gaps),
            latched=self.latched,
            latch_reason=self._latch_reason,
        )

    def _gap(self) -> int | None:
        if self._last_compaction_turn is None:
            return None
        return self._tool_turns - self._last_compaction_turn

    def _mark_compaction(self) -> None:
        gap = self._gap()
        if gap is not None:
            self._last_gaps.append(gap)
        self._last_compaction_turn = self._tool_turns
        self._compactions += 1

    def _trip(self, projected: int, reason: str) -> CompactionGate:
        self._latch_reason = reason
        self._latched_projected = projected
        return self._refuse(projected, reason)

    def _refuse(self, projected: int, reason: str) -> CompactionGate:
        self._refusals += 1
        gap = self._gap()
        rapid = gap is not None and gap < self.tool_turn_threshold
        return CompactionGate(True, projected, reason, rapid, gap)

    def _loop_reason(self, projected: int, gap: int | None) -> str:
        return (
            f"{projected} rapid refills in a row (limit {self.max_consecutive_rapid_refills}): "
            f"the context was over its threshold again {_turns(gap)} after the last compaction "
            f"(a healthy gap is at least {_turns(self.tool_turn_threshold)})"
        )

    def _open_reason(self, projected: int, gap: int | None) -> str:
        if gap is None:
            return "first compaction of the session"
        if projected == 0:
            return f"healthy gap of {_turns(gap)} since the last compaction"
        return (
            f"rapid refill {projected} of {self.max_consecutive_rapid_refills} allowed in a row: "
            f"{_turns(gap)} since the last compaction (threshold {self.tool_turn_threshold})"
        )


def _turns(count: int | None) -> str:
    return "1 tool turn" if count == 1 else f"{count} tool turns"


def _reason_text(reason: object) -> str:
    """``reason`` as the latch keeps it: a text, whatever the host passed (None, an object
    whose ``__str__`` raises), so that ``trip`` always latches."""
    try:
        text = reason if type(reason) is str else "" if reason is None else str(reason)
    except Exception:
        text = ""
    return text or "stopped by the host"
