"""What every breaker that only reported results move has in common."""

from __future__ import annotations

from .._calls import CallKey
from .._state import AgentState

__all__ = ["ResultsOnly"]


class ResultsOnly:
    """A breaker that records no call and keeps nothing before the agent's first result: the
    in-process store skips its ``record``, and asks it nothing for an agent that reported none."""

    records = False
    awaits_results = True

    def record(self, state: AgentState, call: CallKey) -> None:
        """Only results move this breaker."""

    def refused(self, state: AgentState, call: CallKey) -> None:
        """A refused call changes nothing."""
