"""Old import path, kept working: the same objects as ``loopfuse.analysis.scanreport.assets``."""

from __future__ import annotations

from ..analysis.scanreport.assets import (
    CSS,
    SCRIPT,
)

__all__ = ["CSS", "SCRIPT"]
