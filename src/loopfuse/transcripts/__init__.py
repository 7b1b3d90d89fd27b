"""Old import path, kept working: the same objects as ``loopfuse.analysis.transcripts``."""

from __future__ import annotations

__all__: list[str] = []
