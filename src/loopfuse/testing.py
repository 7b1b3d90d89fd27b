"""Helpers for testing code that uses a guard: a clock you move by hand, a listener that records.

``FakeClock`` is passed where a guard or supervisor takes ``clock=``, so idle expiry and
supervision timelines run without sleeping. ``RecordingListener`` is passed in
``listeners=`` and keeps every hook call the guard made, in order.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from .decision import Decision
from .listeners import GuardListener

__all__ = ["FakeClock", "Hook", "ListenerEvent", "RecordingListener"]

Hook = Literal["on_check", "on_deny", "on_escalate", "on_fail_open", "on_unjudged_check"]


class FakeClock:
    """A monotonic clock that stands still until ``advance`` moves it."""

    def __init__(self, start: float = 1000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        """Move the clock forward by ``seconds`` (never backwards: a monotonic clock)."""
        if seconds < 0:
            raise ValueError(f"a clock cannot go back (advance({seconds!r}))")
        self.now += seconds


@dataclass(frozen=True)
class ListenerEvent:
    """One hook call: which hook, for which agent, and what the hook received."""

    hook: Hook
    agent: Any
    decision: Decision | None = None
    first: bool | None = None
    reason: str | None = None
    tool: str | None = None

    @property
    def kind(self) -> str | None:
        """The kind of the decision the hook received (None for ``on_fail_open`` and allowed checks)."""
        return self.decision.kind if self.decision is not None else None


class RecordingListener(GuardListener):
    """A listener that records every hook call in ``events``, in the order the guard made them."""

    def __init__(self) -> None:
        self.events: list[ListenerEvent] = []

    def of(self, hook: Hook) -> list[ListenerEvent]:
        """The recorded calls of one hook."""
        return [event for event in self.events if event.hook == hook]

    def on_check(self, decision: Decision, agent: Any) -> None:
        self.events.append(ListenerEvent("on_check", agent, decision))

    def on_deny(self, decision: Decision, agent: Any, first: bool) -> None:
        self.events.append(ListenerEvent("on_deny", agent, decision, first=first))

    def on_escalate(self, decision: Decision, agent: Any) -> None:
        self.events.append(ListenerEvent("on_escalate", agent, decision))

    def on_fail_open(self, reason: str, tool: str, agent: Any) -> None:
        self.events.append(ListenerEvent("on_fail_open", agent, reason=reason, tool=tool))

    def on_unjudged_check(self, reason: str, tool: str, agent: Any) -> None:
        self.events.append(ListenerEvent("on_unjudged_check", agent, reason=reason, tool=tool))
