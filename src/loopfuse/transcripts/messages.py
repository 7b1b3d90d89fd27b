"""Old import path, kept working: the same objects as ``loopfuse.analysis.transcripts.messages``."""

from __future__ import annotations

from ..analysis.transcripts.messages import (
    looks_message,
    read_messages_document,
    read_messages_lines,
)

__all__ = ["looks_message", "read_messages_document", "read_messages_lines"]
