"""Old import path, kept working: the same objects as ``loopfuse.analysis.scanreport.page``."""

from __future__ import annotations

from ..analysis.scanreport.page import (
    Markers,
    render_html,
)

__all__ = ["Markers", "render_html"]
