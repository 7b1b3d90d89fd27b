"""Exceptions raised by loopfuse on purpose.

Every other failure inside the guard fails open: the call is allowed and the
event is counted in ``Guard.stats()``. An exception that is not an ``Exception``
(``KeyboardInterrupt``, ``SystemExit``, a host's own ``BaseException``) raised by the
caller's objects leaves as it came, before the call is counted. The hierarchy::

    LoopfuseError
    ├── ConfigError        bad configuration, found at construction (also a ValueError)
    ├── LoopBrakeError     the standalone loop brake refused a call
    └── LoopAbortedError   an adapter stopped a run that kept calling after denials

No message or attribute of these exceptions contains a tool call's argument values.
"""

from __future__ import annotations

from ._shown import shown_tool

__all__ = ["ConfigError", "LoopAbortedError", "LoopBrakeError", "LoopfuseError"]


class LoopfuseError(Exception):
    """Base class of every exception loopfuse raises on purpose."""


class ConfigError(LoopfuseError, ValueError):
    """A configuration value is missing, unknown, of the wrong type or out of range."""


class LoopBrakeError(LoopfuseError):
    """The loop brake refused the same call made more than ``max_repeats`` times in a row."""

    code = "LOOP_BRAKE"
    plugin = "loopfuse"

    def __init__(
        self, *, tool_name: str, count: int, max_repeats: int, hash_prefix: str, session_id: str
    ) -> None:
        self.tool_name = tool_name
        self.count = count
        self.max_repeats = max_repeats
        self.hash_prefix = hash_prefix
        self.session_id = session_id
        super().__init__(
            f"Loop brake: refused the identical {shown_tool(tool_name)} call made {count} times in a row "
            f"(at most {max_repeats} allowed, call hash {hash_prefix}). Stop repeating it: "
            "change your approach, or report to the user what is blocking you."
        )


class LoopAbortedError(LoopfuseError):
    """An agent kept calling after ``abort_after_denials`` denials in a row; its run was stopped."""

    def __init__(self, *, agent: str, tool: str, denials: int, kind: str | None) -> None:
        self.agent = agent
        self.tool = tool
        self.denials = denials
        self.kind = kind
        super().__init__(
            f"loopfuse stopped agent {agent!r}: it kept calling tools after {denials} denials "
            f"in a row (last: {shown_tool(tool)}, {kind}). The agent is stuck in a loop."
        )
