"""Old import path, kept working: the same objects as ``loopfuse.analysis.transcripts.gemini``."""

from __future__ import annotations

from ..analysis.transcripts.gemini import (
    read_gemini,
)

__all__ = ["read_gemini"]
