"""Old import path, kept working: the same objects as ``loopfuse._stats``."""

from __future__ import annotations

from ._stats import (
    GuardStats,
)

__all__ = [
    "GuardStats",
]
