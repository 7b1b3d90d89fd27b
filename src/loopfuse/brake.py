"""Old import path, kept working: the same objects as ``loopfuse._brake``."""

from __future__ import annotations

from ._brake import (
    LoopBrake,
    decorate_tool,
    wrap_execute,
)

__all__ = [
    "LoopBrake",
    "decorate_tool",
    "wrap_execute",
]
