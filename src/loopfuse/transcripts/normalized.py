"""Old import path, kept working: the same objects as ``loopfuse.analysis.transcripts.normalized``."""

from __future__ import annotations

from ..analysis.transcripts.normalized import (
    looks_normalized,
    read_normalized,
    row_call,
)

__all__ = ["looks_normalized", "read_normalized", "row_call"]
