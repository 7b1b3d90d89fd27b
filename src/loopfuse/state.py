"""Old import path, kept working: the same objects as ``loopfuse._state``."""

from __future__ import annotations

from ._state import (
    AgentResults,
    AgentState,
    CountingWindow,
    CycleTrack,
    RecentDigests,
    ResultBook,
    ToolResult,
)

__all__ = [
    "AgentResults",
    "AgentState",
    "CountingWindow",
    "CycleTrack",
    "RecentDigests",
    "ResultBook",
    "ToolResult",
]
