"""The call cap: a lifetime limit of calls per agent."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from .._calls import CallKey
from .._state import AgentState, ToolResult
from ..decision import Denial, Kind
from ._text import STOP

if TYPE_CHECKING:
    from ..config import GuardConfig

__all__ = ["CallCap"]


class CallCap:
    """Deny every call once the agent has made ``limit`` calls (0 disables)."""

    kind: Kind = "cap"
    section: ClassVar[str] = "circuit_breaker"  # key max_calls_per_agent
    config_type: ClassVar[type | None] = None  # CircuitBreakerConfig, shared with the window
    lua: ClassVar[str] = "fragment"  # stores/lua/breakers/cap.lua
    records = False  # record() does nothing: the store skips it
    MESSAGES: ClassVar[dict[str, str]] = {
        "circuit_breaker.max_calls_per_agent": (
            "this agent has made {count} tool calls, the most allowed (max_calls_per_agent {limit}). " + STOP
        ),
    }

    def __init__(self, limit: int) -> None:
        self.limit = limit

    @classmethod
    def from_config(cls, config: GuardConfig) -> CallCap | None:
        cb = config.circuit_breaker
        on = cb.enabled and cb.cap_enabled and cb.max_calls_per_agent
        return cls(cb.max_calls_per_agent) if on else None

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

    def allowed_repeats(self) -> int | None:
        """How many identical calls, each with the same successful result, it allows."""
        return self.limit or None

    def lua_settings(self) -> tuple[int, ...]:
        return (self.limit,)

    def script_rule(self, code: str, tool: str) -> str:
        return "circuit_breaker.max_calls_per_agent"
