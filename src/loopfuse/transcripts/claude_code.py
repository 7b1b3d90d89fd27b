"""Old import path, kept working: the same objects as ``loopfuse.analysis.transcripts.claude_code``."""

from __future__ import annotations

from ..analysis.transcripts.claude_code import (
    looks_claude_code,
    read_claude_code,
)

__all__ = ["looks_claude_code", "read_claude_code"]
