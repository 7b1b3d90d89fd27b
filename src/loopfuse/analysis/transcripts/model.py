"""What every transcript reader yields: one ``ToolCall`` per recorded tool call."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["ToolCall"]


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One recorded tool call. ``run`` names the recorded session, ``agent`` the caller in it."""

    run: str
    agent: str
    step: int
    tool: str
    args: Any
    time: float | None = None
    result: str | None = None
    ok: bool | None = None
