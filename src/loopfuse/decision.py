"""What the guard answers for one call."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["Decision", "Denial", "Kind"]

Kind = Literal[
    "duplicate", "cap", "repeat", "cycle", "near_duplicate", "same_error", "stall", "failures", "invalid",
    "store",
]  # fmt: skip


@dataclass(frozen=True, slots=True)
class Denial:
    """A breaker's refusal, before the guard turns it into a message."""

    kind: Kind | str  # a custom breaker names its own kind
    count: int
    limit: int
    rule: str = ""  # the configuration key whose limit was reached, e.g. "same_error.limit"


@dataclass(frozen=True, slots=True)
class Decision:
    """The guard's answer for one call.

    ``allowed`` says whether the call may run. When it may not, ``message`` is the
    text to hand the model instead of the tool's result, ``kind`` names the breaker,
    ``count`` and ``limit`` the numbers it compared, ``rule`` the configuration key of
    ``limit`` (such as ``circuit_breaker.same_result_limit``; empty for a custom breaker's
    denial). ``escalate`` becomes true once the
    agent has been denied ``abort_after_denials`` times in a row: the adapter then stops
    the run. ``shadow`` is true when a denial was only logged (shadow mode). ``warning`` is
    set on an allowed call that a breaker's ``warn_at`` reached: the adapter adds it to the
    tool's result, so the model reads it with what the call returned.
    """

    allowed: bool
    tool: str
    message: str | None = None
    kind: Kind | str | None = None
    count: int = 0
    limit: int = 0
    escalate: bool = False
    shadow: bool = False
    rule: str = ""
    warning: str | None = None

    def __bool__(self) -> bool:
        return self.allowed
