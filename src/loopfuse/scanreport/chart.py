"""Old import path, kept working: the same objects as ``loopfuse.analysis.scanreport.chart``."""

from __future__ import annotations

from ..analysis.scanreport.chart import (
    timeline_svg,
)

__all__ = ["timeline_svg"]
