"""Old import path, kept working: the same objects as ``loopfuse.incidents._reader``."""

from __future__ import annotations

from .incidents._reader import (
    IncidentReader,
)

__all__ = ["IncidentReader"]
