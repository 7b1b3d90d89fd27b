"""Old import path, kept working: the same objects as ``loopfuse.analysis.transcripts.openhands``."""

from __future__ import annotations

from ..analysis.transcripts.openhands import (
    event_files,
    looks_openhands,
    read_openhands_document,
    read_openhands_events,
    read_openhands_lines,
)

__all__ = [
    "event_files",
    "looks_openhands",
    "read_openhands_document",
    "read_openhands_events",
    "read_openhands_lines",
]
