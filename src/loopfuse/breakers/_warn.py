"""The warning rung: a breaker's copy with its limits lowered to ``warn_at``.

Checks are pure, so the copy can judge the same state as the breaker itself: where the copy
would deny and every breaker allows, the call runs with a warning added to its result.
"""

from __future__ import annotations

import copy
from typing import Any, TypeVar

__all__ = ["WARNING_TEXT", "lowered"]

B = TypeVar("B")

WARNING_TEXT = (
    "[loopfuse warning: this {tool} call ran, but it repeats a pattern that is not making "
    "progress ({kind}: {count} times, warn_at {warn_at}). Change your approach now: the guard "
    "will soon refuse such calls.]"
)


def lowered(breaker: B, limits: tuple[str, ...], warn_at: int) -> B:
    """A copy of ``breaker`` whose positive ``limits`` (and per-tool limits) are at most
    ``warn_at``; it never records, and carries ``warn_at`` for the Redis script and the highest
    of those limits (``highest_limit``: a ``warn_at`` at or above it never warns)."""
    warner: Any = copy.copy(breaker)
    highest = 0
    for name in limits:
        value = getattr(warner, name)
        if value:
            highest = max(highest, value)
            setattr(warner, name, min(value, warn_at))
    tool_limits = getattr(warner, "tool_limits", None)
    if tool_limits:
        highest = max(highest, *tool_limits.values())
        warner.tool_limits = {tool: min(n, warn_at) for tool, n in tool_limits.items()}
    warner.warn_at, warner.highest_limit = warn_at, highest
    return warner  # type: ignore[no-any-return]
