"""Old import path, kept working: the same objects as ``loopfuse.analysis.transcripts.model``."""

from __future__ import annotations

from ..analysis.transcripts.model import (
    ToolCall,
)

__all__ = ["ToolCall"]
