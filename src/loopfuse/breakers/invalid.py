"""The invalid-turn breaker: replies with no usable tool call, again and again in a row.

A host reports each such turn (no tool call where one was expected, a call to a tool that
does not exist, arguments that do not parse) with ``Guard.note_invalid``. The store keeps
one streak per agent: the invalid turns since the agent's last allowed tool call, so
invalid turns spread among real work never add up. This module owns the rule, its
configuration section (``[invalid]``) and the text the model is given.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..checks import check_bool, check_int
from ..decision import Decision, Denial, Kind
from ..stores.base import Outcome

__all__ = ["INVALID_MESSAGE", "INVALID_TOOL", "InvalidConfig", "InvalidTurnBreaker"]

INVALID_TOOL = "<invalid turn>"  # Decision.tool of note_invalid's decisions

INVALID_MESSAGE = (
    "loopfuse: your last {count} replies in a row contained no usable tool call ({kind} "
    "limit {limit}). Repeating the same malformed reply will not work: call one of the "
    "available tools by its exact name with valid JSON arguments, or stop and report to the "
    "user what is blocking you."
)


@dataclass(frozen=True)
class InvalidConfig:
    """Section ``invalid``: deny the ``limit``-th invalid turn in a row; the host is told to
    stop the run (``Decision.escalate``) at the ``[guard] abort_after_denials``-th denial in
    a row, as for every other breaker."""

    enabled: bool = True
    limit: int = 6

    def __post_init__(self) -> None:
        check_bool("invalid", "enabled", self.enabled)
        check_int("invalid", "limit", self.limit, 1)


class InvalidTurnBreaker:
    """Judges an agent's streak of invalid turns (pure: the store keeps the streak)."""

    kind: Kind = "invalid"

    def __init__(self, limit: int, abort_after: int | None = 3) -> None:
        self.limit = limit
        self.abort_after = abort_after

    def judge(self, streak: int) -> Denial | None:
        """A denial once ``streak`` reaches the limit, else None."""
        return Denial("invalid", streak, self.limit, "invalid.limit") if streak >= self.limit else None

    def escalates(self, streak: int) -> bool:
        """Whether the host should end the run: ``abort_after`` denials in a row (never if 0)."""
        abort = self.abort_after
        return abort is not None and abort > 0 and streak - self.limit + 1 >= abort

    def message(self, denial: Denial) -> str:
        return INVALID_MESSAGE.format(count=denial.count, limit=denial.limit, kind=denial.kind)

    def denied(self, streak: int, shadow: bool) -> tuple[Decision, Outcome] | None:
        """The decision (and the store-style outcome) for a streak at or past the limit;
        None below it."""
        denial = self.judge(streak)
        if denial is None:
            return None
        escalate = self.escalates(streak) and not shadow
        message = self.message(denial)
        decision = Decision(
            shadow, INVALID_TOOL, message, "invalid", streak, denial.limit, escalate, shadow, denial.rule
        )
        start = escalate and not self.escalates(streak - 1)
        return decision, Outcome(denial, streak == denial.limit, escalate, start)
