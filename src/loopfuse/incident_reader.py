"""Old import path, kept working: the same objects, now in ``loopfuse.incidents``."""

from __future__ import annotations

from .incidents._reader import (
    IncidentReader,
)

__all__ = ["IncidentReader"]
