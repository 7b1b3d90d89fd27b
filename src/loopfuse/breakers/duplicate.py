"""The window breaker: the same call too often among the agent's recent calls."""

from __future__ import annotations

from ..calls import CallKey
from ..decision import Denial, Kind
from ..state import AgentState


class WindowBreaker:
    """Deny a call that already ran ``limit`` times among the last recorded calls.

    The window's length is the state's (``AgentState.window``); this breaker only reads
    and appends.
    """

    kind: Kind = "duplicate"

    def __init__(self, limit: int) -> None:
        self.limit = limit

    def check(self, state: AgentState, call: CallKey) -> Denial | None:
        count = state.window.count(call.key)
        if count >= self.limit:
            return Denial("duplicate", count, self.limit)
        return None

    def record(self, state: AgentState, call: CallKey) -> None:
        state.window.push(call.key)

    def refused(self, state: AgentState, call: CallKey) -> None:
        """A refused call never enters the window."""
