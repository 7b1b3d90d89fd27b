"""The report page: summary, filter, the table of runs (worst first, each linked to its
chart), the files skipped with why, then one chart per charted run (linked back)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from html import escape

from ..scanstats import RunStats
from .assets import CSS, SCRIPT
from .chart import timeline_svg

__all__ = ["Markers", "render_html"]

Markers = Mapping[tuple[str, str, str], Mapping[str, int | None]]  # (path, run, agent) -> breaker -> step

_VERDICTS = ("loop", "suspect", "ok")
_HEADERS = (
    ("verdict", "l"), ("run", "l"), ("agent", "l"), ("calls", ""), ("distinct", ""), ("duration", ""),
    ("most repeated", "l"), ("in a row", ""), ("cycle", ""), ("repeats at", ""), ("breaker", "l"),
    ("rule", "l"), ("denied at", ""), ("path", "l"),
)  # fmt: skip
_LEGEND = (
    "x is the step; each row of dots is one distinct call, so a flat line is the same call again. "
    "Point at a dot to see its step and call. The red line marks where the configured guard "
    "first denies (what makes the run a loop), a dashed line where each breaker of the "
    "configuration, alone, would first deny."
)


def render_html(
    rows: Sequence[RunStats],
    markers: Markers,
    searched: Sequence[str],
    skipped: str,
    *,
    skipped_files: Sequence[tuple[str, str]] = (),
    root: str = "",
) -> str:
    """The whole page. ``rows`` come worst first; a row with a timeline gets a chart;
    ``skipped`` is the counts line, ``skipped_files`` (path, reason) pairs; paths are
    relative to ``root``."""
    parts = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
        "<meta name='viewport' content='width=device-width'><title>loopfuse scan report</title>",
        f"<style>{CSS}</style></head><body>",
        "<h1>loopfuse scan</h1>",
        _summary(rows, searched, root),
        f"<p class='legend'>{escape(skipped)}</p>",
        _controls(rows),
        _table(rows),
        _skipped(skipped_files),
        _charts(rows, markers),
        "<div id='tip' role='tooltip' hidden></div>",
        f"<script>{SCRIPT}</script></body></html>",
    ]
    return "\n".join(parts)


def _summary(rows: Sequence[RunStats], searched: Sequence[str], root: str) -> str:
    counts = Counter(r.verdict for r in rows)
    where = f" Paths are relative to <code>{escape(root)}</code>." if root else ""
    return (
        f"<p>{len(rows)} agent run(s): <span class='loop'>{counts['loop']} looping</span>, "
        f"{counts['suspect']} suspect, {counts['ok']} ok. "
        f"Searched: {escape(', '.join(searched))}.{where}</p>"
    )


def _controls(rows: Sequence[RunStats]) -> str:
    counts = Counter(r.verdict for r in rows)
    boxes = "".join(
        f"<label><input type='checkbox' class='verdict' value='{v}' checked> "
        f"<span class='{v}'>{v}</span> ({counts[v]})</label>"
        for v in _VERDICTS
    )
    return (
        "<div id='controls'><input id='filter' type='search' aria-label='filter the runs' "
        "placeholder='filter by run, agent, tool or path'>"
        f"{boxes}<span id='shown'>{len(rows)} of {len(rows)} runs shown</span></div>"
    )


def _table(rows: Sequence[RunStats]) -> str:
    head = "".join(f"<th class='{align}'>{name}</th>" for name, align in _HEADERS)
    body = "".join(_row(i, r) for i, r in enumerate(rows))
    return f"<table id='runs'><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _row(i: int, r: RunStats) -> str:
    search = " ".join((r.verdict, r.run, r.agent, r.top_tool or "", r.breaker or "", r.path)).lower()
    chart = f" data-chart='chart-{i}'" if r.timeline else ""
    name = f"<a href='#chart-{i}'>{escape(r.run)}</a>" if r.timeline else escape(r.run)
    cells = (
        f"<td class='l {r.verdict}'>{r.verdict}</td><td class='l nowrap'>{name}</td>"
        f"<td class='l'>{escape(r.agent)}</td><td>{r.calls}</td><td>{r.distinct_text}</td>"
        f"<td>{r.duration_text}</td><td class='l nowrap'>{escape(r.top_text)}</td><td>{r.longest_run}</td>"
        f"<td>{r.cycle_text}</td><td>{r.loop_start_text}</td><td class='l'>{escape(r.breaker or '-')}</td>"
        f"<td class='l'>{escape(r.rule or '-')}</td><td>{r.denied_at_text}</td><td class='path'>{escape(r.path)}</td>"
    )
    return f"<tr id='row-{i}' data-verdict='{r.verdict}' data-search='{escape(search)}'{chart}>{cells}</tr>"


def _skipped(files: Sequence[tuple[str, str]]) -> str:
    if not files:
        return ""
    rows = "".join(
        f"<tr><td class='path'>{escape(p)}</td><td class='l'>{escape(why)}</td></tr>" for p, why in files
    )
    opened = " open" if len(files) <= 20 else ""
    return (
        f"<details id='skipped'{opened}><summary>{len(files)} file(s) skipped, in whole or in part</summary>"
        f"<table><thead><tr><th class='l'>path</th><th class='l'>why</th></tr></thead>"
        f"<tbody>{rows}</tbody></table></details>"
    )


def _charts(rows: Sequence[RunStats], markers: Markers) -> str:
    sections = [
        _chart(i, r, markers.get((r.path, r.run, r.agent), {})) for i, r in enumerate(rows) if r.timeline
    ]
    if not sections:
        return ""
    uncharted = len(rows) - len(sections)
    note = f" Only the {len(sections)} worst runs are charted." if uncharted else ""
    return f"<h2>Timelines</h2><p class='legend'>{_LEGEND}{note}</p>" + "".join(sections)


def _chart(i: int, r: RunStats, marks: Mapping[str, int | None]) -> str:
    return (
        f"<section class='chart' id='chart-{i}'><h3><span class='{r.verdict}'>{r.verdict}</span> "
        f"{escape(r.run)} / {escape(r.agent)}</h3><p class='legend'>{escape(r.path)}: {r.calls} calls, "
        f"{escape(r.top_text)} most repeated.{_denied(r)} <a href='#row-{i}'>Back to the table</a></p>"
        f"{timeline_svg(r, marks)}</section>"
    )


def _denied(r: RunStats) -> str:
    if r.denied_at is None:
        return " No breaker denies."
    rule = f" ({escape(r.rule)})" if r.rule else ""
    return f" First denied by {escape(r.breaker or '')}{rule} at step {r.denied_at}."
