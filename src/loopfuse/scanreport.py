"""The self-contained HTML report of ``loopfuse scan --html``: a summary table and, per
looping run, a timeline chart (inline SVG, no script, no network) marking where the
loop starts and where each configured breaker would first deny."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape

from .scanstats import RunStats

__all__ = ["render_html"]

_W, _LEFT, _LANE = 900, 40, 6
_MARKER_COLORS = ("#1f6feb", "#8250df", "#bf8700", "#1a7f37")
_CSS = """
body{font:14px system-ui,sans-serif;margin:24px;color:#1f2328}
table{border-collapse:collapse;margin:12px 0}
td,th{padding:3px 8px;border-bottom:1px solid #d0d7de;text-align:right}
td:nth-child(-n+3),th:nth-child(-n+3){text-align:left}
.loop{color:#cf222e;font-weight:600}.suspect{color:#9a6700}
section{margin:28px 0}svg{border:1px solid #d0d7de;background:#fff}.legend{color:#57606a;font-size:12px}
"""

Markers = Mapping[tuple[str, str], Mapping[str, int | None]]


def render_html(rows: Sequence[RunStats], markers: Markers, searched: Sequence[str], skipped: str) -> str:
    loops = [r for r in rows if r.verdict == "loop"]
    parts = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
        "<title>loopfuse scan report</title>",
        f"<style>{_CSS}</style></head><body>",
        "<h1>loopfuse scan</h1>",
        f"<p>{len(rows)} agent run(s), <span class='loop'>{len(loops)} looping</span>. "
        f"Searched: {escape(', '.join(searched))}.</p>",
        f"<p class='legend'>{escape(skipped)}</p>",
        _table(rows),
    ]
    parts += [_chart_section(r, markers.get((r.run, r.agent), {})) for r in loops]
    parts.append("</body></html>")
    return "\n".join(parts)


def _table(rows: Sequence[RunStats]) -> str:
    head = "".join(
        f"<th>{h}</th>"
        for h in (
            "verdict",
            "run",
            "agent",
            "calls",
            "distinct",
            "most repeated",
            "in a row",
            "cycle",
            "loop start",
        )
    )
    body = "".join(_row(r) for r in rows)
    return f"<table id='runs'><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _row(r: RunStats) -> str:
    cycle = f"{r.cycle_repeats}x{r.cycle_period}" if r.cycle_repeats else "-"
    start = "-" if r.loop_start is None else str(r.loop_start)
    cells = (
        f"<td class='{r.verdict}'>{r.verdict}</td><td>{escape(r.run)}</td><td>{escape(r.agent)}</td>"
        f"<td>{r.calls}</td><td>{r.distinct}</td><td>{r.top_count}x {escape(r.top_tool or '-')}</td>"
        f"<td>{r.longest_run}</td><td>{cycle}</td><td>{start}</td>"
    )
    return f"<tr>{cells}</tr>"


def _chart_section(r: RunStats, marks: Mapping[str, int | None]) -> str:
    title = f"{escape(r.run)} / {escape(r.agent)}"
    legend = f"{r.calls} calls; each row of dots is one distinct call, a flat line is the same call again."
    return (
        f"<section class='run'><h2>{title}</h2><p class='legend'>{legend}</p>"
        f"{timeline_svg(r, marks)}</section>"
    )


def timeline_svg(r: RunStats, marks: Mapping[str, int | None]) -> str:
    """One run's calls as dots (x: step, y: which distinct call), with vertical markers."""
    points = r.timeline
    if not points:
        return "<p>(no timeline recorded)</p>"
    first, last = points[0][0], max(p[0] for p in points)
    lanes = max(p[1] for p in points) + 1
    top = 18 + 11 * (len(marks) + 1)
    height = top + lanes * _LANE + 24
    span = max(last - first, 1)

    def x(step: int) -> float:
        return _LEFT + (step - first) * (_W - _LEFT - 20) / span

    dots = "".join(
        f"<rect x='{x(s):.1f}' y='{top + lane * _LANE}' width='3' height='{_LANE - 1}' "
        f"fill='hsl({lane * 47 % 360},60%,45%)'/>"
        for s, lane in points
    )
    lines: list[str] = []
    if r.loop_start is not None:
        label = f"loop starts (step {r.loop_start})"
        lines.append(_marker(x(r.loop_start), (top, height), "#cf222e", label, "loop-start", 0))
    for i, (name, step) in enumerate(sorted(marks.items())):
        if step is not None:
            color = _MARKER_COLORS[i % len(_MARKER_COLORS)]
            lines.append(
                _marker(x(step), (top, height), color, f"{name} denies (step {step})", "breaker", i + 1)
            )
    axis = (
        f"<text x='{_LEFT}' y='{height - 6}' font-size='11'>step {first}</text>"
        f"<text x='{_W - 20}' y='{height - 6}' font-size='11' text-anchor='end'>step {last}</text>"
    )
    return (
        f"<svg class='timeline' xmlns='http://www.w3.org/2000/svg' width='{_W}' height='{height}' "
        f"viewBox='0 0 {_W} {height}' role='img'><title>timeline of {escape(r.run)}</title>"
        f"{dots}{''.join(lines)}{axis}</svg>"
    )


def _marker(x: float, box: tuple[int, int], color: str, label: str, kind: str, row: int) -> str:
    top, height = box
    dash = "" if kind == "loop-start" else " stroke-dasharray='4 3'"
    return (
        f"<g class='marker {kind}'><line x1='{x:.1f}' x2='{x:.1f}' y1='{top - 4}' y2='{height - 18}' "
        f"stroke='{color}' stroke-width='2'{dash}/><text x='{x + 3:.1f}' y='{10 + row * 11}' "
        f"font-size='11' fill='{color}'>{escape(label)}</text></g>"
    )
