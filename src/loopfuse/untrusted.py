"""Old import path, kept working: the same objects as ``loopfuse._untrusted``."""

from __future__ import annotations

from ._untrusted import (
    BAD_TOOL,
    error_text,
    is_exception,
    tool_name,
    tool_result,
)

__all__ = [
    "BAD_TOOL",
    "error_text",
    "is_exception",
    "tool_name",
    "tool_result",
]
