"""The self-contained HTML report of ``loopfuse scan --html``: one page, no network.

Looping runs first; each row links to its run's timeline chart (and back); hovering a
chart shows the step and the call there; a text box and verdict checkboxes filter the
runs (also from the address: ``report.html#verdict=loop&q=search``); skipped files are
listed with why.
"""

from __future__ import annotations

from .chart import timeline_svg
from .page import Markers, render_html

__all__ = ["Markers", "render_html", "timeline_svg"]
