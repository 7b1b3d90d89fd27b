"""Old import path, kept working: the same objects as ``loopfuse.analysis.scanreport``."""

from __future__ import annotations

from ..analysis.scanreport import (
    Markers,
    render_html,
    timeline_svg,
)

__all__ = ["Markers", "render_html", "timeline_svg"]
