"""Old import path, kept working: the same objects as ``loopfuse.analysis.transcripts.base``."""

from __future__ import annotations

from ..analysis.transcripts.base import (
    EXCERPT_CHARS,
    MAX_DOCUMENT_BYTES,
    REPORT_BYTES,
    CallQueue,
    ReadTally,
    excerpt,
    json_lines,
    load_document,
    parse_arguments,
    parse_time,
)

__all__ = [
    "EXCERPT_CHARS",
    "MAX_DOCUMENT_BYTES",
    "REPORT_BYTES",
    "CallQueue",
    "ReadTally",
    "excerpt",
    "json_lines",
    "load_document",
    "parse_arguments",
    "parse_time",
]
