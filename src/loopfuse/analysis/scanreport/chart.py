"""One run's timeline as inline SVG: x is the step, each row of dots one distinct call,
with vertical lines where the configured guard first denies and where each breaker alone
would.

Each dot carries its step (``data-step``) and its group the call (``data-call``: the tool,
and with ``--show-args`` the first arguments), which the page shows on hover.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from html import escape

from ..scanstats import RunStats

__all__ = ["timeline_svg"]

_W, _LEFT, _LANE = 900, 40, 6
_MARKER_COLORS = ("#1f6feb", "#8250df", "#bf8700", "#1a7f37", "#0a7ea4", "#9a6700", "#6e7781")


def timeline_svg(r: RunStats, marks: Mapping[str, int | None]) -> str:
    """One run's calls as dots (x: step, y: which distinct call), with vertical markers."""
    points = r.timeline
    if not points:
        return "<p>(no timeline recorded)</p>"
    first, last = min(p[0] for p in points), max(p[0] for p in points)
    lanes = max(p[1] for p in points) + 1
    top = 18 + 11 * (len(marks) + 1)
    height = top + lanes * _LANE + 24
    span = max(last - first, 1)

    def x(step: int) -> float:
        return _LEFT + (step - first) * (_W - _LEFT - 20) / span

    axis = (
        f"<text x='{_LEFT}' y='{height - 6}' font-size='11'>step {first}</text>"
        f"<text x='{_W - 20}' y='{height - 6}' font-size='11' text-anchor='end'>step {last}</text>"
    )
    return (
        f"<svg class='timeline' xmlns='http://www.w3.org/2000/svg' width='{_W}' height='{height}' "
        f"viewBox='0 0 {_W} {height}' role='img'><title>timeline of {escape(r.run)}</title>"
        f"{_dots(r, x, top)}{_markers(r, marks, x, (top, height))}{axis}</svg>"
    )


def _dots(r: RunStats, x: Callable[[int], float], top: int) -> str:
    groups: dict[int, list[str]] = {}
    lane_of: dict[int, int] = {}
    for step, lane, call in r.timeline:
        lane_of.setdefault(call, lane)
        groups.setdefault(call, []).append(
            f"<rect x='{x(step):.1f}' y='{top + lane * _LANE}' width='3' height='{_LANE - 1}' "
            f"data-step='{step}'/>"
        )
    return "".join(
        f"<g class='call' data-call='{escape(_label(r, call))}' "
        f"fill='hsl({lane_of[call] * 47 % 360},60%,45%)'>{''.join(dots)}</g>"
        for call, dots in groups.items()
    )


def _label(r: RunStats, call: int) -> str:
    return r.timeline_calls[call] if call < len(r.timeline_calls) else "(call not recorded)"


def _markers(
    r: RunStats, marks: Mapping[str, int | None], x: Callable[[int], float], box: tuple[int, int]
) -> str:
    found: list[tuple[str, int, str, str]] = []
    if r.denied_at is not None:
        found.append((f"guard denies: {r.breaker}", r.denied_at, "#cf222e", "first-denial"))
    for i, (name, step) in enumerate(sorted(marks.items())):
        if step is not None:
            found.append((f"{name} denies", step, _MARKER_COLORS[i % len(_MARKER_COLORS)], "breaker"))
    last = max(p[0] for p in r.timeline)
    return "".join(
        _marker(x(step), box, color, f"{label} (step {step})", kind, row)
        if step <= last
        else _past(box, color, f"{label} (step {step}, past the chart) \u2192", row)
        for row, (label, step, color, kind) in enumerate(found)
    )


def _marker(x: float, box: tuple[int, int], color: str, label: str, kind: str, row: int) -> str:
    top, height = box
    dash = "" if kind == "first-denial" else " stroke-dasharray='4 3'"
    return (
        f"<g class='marker {kind}'><line x1='{x:.1f}' x2='{x:.1f}' y1='{top - 4}' y2='{height - 18}' "
        f"stroke='{color}' stroke-width='2'{dash}/><text x='{x + 3:.1f}' y='{10 + row * 11}' "
        f"font-size='11' fill='{color}'>{escape(label)}</text></g>"
    )


def _past(box: tuple[int, int], color: str, label: str, row: int) -> str:
    """A marker whose step is after the last charted call (charts hold the first calls only)."""
    return (
        f"<g class='marker past'><text x='{_W - 20}' y='{10 + row * 11}' text-anchor='end' "
        f"font-size='11' fill='{color}'>{escape(label)}</text></g>"
    )
