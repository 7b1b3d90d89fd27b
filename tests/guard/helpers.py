"""The outcomes of a list of calls, for timelines written as lists."""

from __future__ import annotations

from typing import Any

from loopfuse import Guard


def run(guard: Guard, calls: list[tuple[str, dict[str, Any]]], agent: Any = "a") -> list[str]:
    """Each call's outcome: "ok" or the denial kind."""
    return [guard.check(tool, args, agent).kind or "ok" for tool, args in calls]
