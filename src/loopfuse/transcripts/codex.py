"""Old import path, kept working: the same objects as ``loopfuse.analysis.transcripts.codex``."""

from __future__ import annotations

from ..analysis.transcripts.codex import (
    looks_codex,
    read_codex,
)

__all__ = ["looks_codex", "read_codex"]
