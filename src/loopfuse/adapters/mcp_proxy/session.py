"""What the stdio relay knows about the client's session: the guard's agent for it and the
tools the backend listed to it. Only standard library.

Each ``initialize`` request starts a session, so a client that initializes again gets a
fresh agent (2026-07-28 clients have no handshake: the process is their session). The
agent is ``{name}:{n}``, ``n`` the number of ``initialize`` requests seen so far.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["LISTING", "MAX_TOOLS", "PendingCall", "Session"]

MAX_TOOLS = 10_000
"""The most tool names kept; a backend that lists more is never judged (fail open)."""
LISTING = object()
"""Stands in the pending requests for a ``tools/list`` whose answer the relay reads."""


@dataclass(frozen=True, slots=True)
class PendingCall:
    """A ``tools/call`` the backend owes an answer to, and whose session made it."""

    tool: str
    args: Any  # an object, as MCP asks; anything else a server may take
    agent: str
    listed: bool = True
    warning: str | None = None  # added to the call's result (``jsonrpc.with_warning``)


class Session:
    """The current session's agent and the tool names the backend listed in it."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._count = 0
        self.agent = f"{name}:0"
        self._tools: set[str] = set()
        self._complete = False

    def restart(self) -> str:
        """Start the next session (an ``initialize`` request); the agent it replaces."""
        previous = self.agent
        self._count += 1
        self.agent = f"{self._name}:{self._count}"
        self.tools_changed()
        return previous

    def tools_changed(self) -> None:
        """Forget the listed tools until the client lists them again (fail open meanwhile)."""
        self._tools.clear()
        self._complete = False

    def listed(self, answer: dict[str, Any]) -> None:
        """Learn the names in a ``tools/list`` answer; the list is known once a page has
        no ``nextCursor`` (pages add up)."""
        result = answer.get("result")
        tools = result.get("tools") if isinstance(result, dict) else None
        if not isinstance(result, dict) or not isinstance(tools, list):
            return
        for tool in tools:
            name = tool.get("name") if isinstance(tool, dict) else None
            if isinstance(name, str):
                self.learn(name)
        if not result.get("nextCursor") and len(self._tools) < MAX_TOOLS:
            self._complete = True

    def learn(self, tool: str) -> None:
        """Count ``tool`` as listed (the backend answered a call of it without an error)."""
        if len(self._tools) < MAX_TOOLS:
            self._tools.add(tool)
        else:
            self._complete = False

    def unlisted(self, tool: str) -> bool:
        """Whether the backend's whole list is known and ``tool`` is not on it."""
        return self._complete and tool not in self._tools
