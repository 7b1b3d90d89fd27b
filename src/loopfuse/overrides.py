"""Old import path, kept working: the same objects as ``loopfuse._overrides``."""

from __future__ import annotations

from ._overrides import (
    Overrides,
    allow_next_logged,
    paused_logged,
)

__all__ = [
    "Overrides",
    "allow_next_logged",
    "paused_logged",
]
