"""The call cap: a lifetime limit of calls per agent."""

from __future__ import annotations

from ..calls import CallKey
from ..decision import Denial, Kind
from ..state import AgentState, ToolResult


class CallCap:
    """Deny every call once the agent has made ``limit`` calls (0 disables)."""

    records = False  # record() does nothing: the store skips it
    kind: Kind = "cap"

    def __init__(self, limit: int) -> None:
        self.limit = limit

    def check(self, state: AgentState, call: CallKey) -> Denial | None:
        if self.limit and state.calls >= self.limit:
            return Denial("cap", state.calls, self.limit, "circuit_breaker.max_calls_per_agent")
        return None

    def record(self, state: AgentState, call: CallKey) -> None:
        """The guard counts every recorded call itself (``state.calls``)."""

    def refused(self, state: AgentState, call: CallKey) -> None:
        """A refusal changes nothing."""

    def observe(self, state: AgentState, call: CallKey, result: ToolResult) -> None:
        """Results do not matter to the cap."""
