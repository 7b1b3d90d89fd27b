"""Old import path, kept working: the same objects as ``loopfuse.analysis.transcripts.tally``."""

from __future__ import annotations

from ..analysis.transcripts.tally import (
    SKIPPED_LIST_LIMIT,
    ReadTally,
    Skipped,
)

__all__ = ["SKIPPED_LIST_LIMIT", "ReadTally", "Skipped"]
