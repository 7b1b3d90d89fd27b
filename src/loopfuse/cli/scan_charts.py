"""What the HTML report of ``loopfuse scan`` charts: the timelines of the worst runs (kept
in bounded memory while scanning) and where each configured breaker would first deny."""

from __future__ import annotations

import dataclasses
import heapq
import itertools
from collections.abc import Mapping, Sequence
from typing import Any

from ..analysis.replay import is_invalid, replay_calls, shadow_config
from ..analysis.scanstats import RunStats
from ..analysis.transcripts.base import ReadTally
from ..analysis.transcripts.detect import Source, read_source
from ..analysis.transcripts.model import ToolCall
from ..breakers.build import build_breakers
from ..config import GuardConfig
from ..guard import Guard

__all__ = [
    "CHART_LIMIT",
    "MARKER_CALLS",
    "ChartedRows",
    "Markers",
    "breaker_configs",
    "breaker_markers",
    "breaker_sections",
]

CHART_LIMIT = 100
MARKER_CALLS = 20_000  # calls of a charted source replayed for its breaker markers (charts hold 2,000)

Markers = dict[tuple[str, str, str], dict[str, int | None]]  # (path, run, agent) -> breaker -> step


class ChartedRows:
    """Every row added, with the timelines of the ``limit`` worst kept (in the order
    ``worst_first`` gives) and every other timeline dropped as soon as it is outranked."""

    def __init__(self, limit: int) -> None:
        self.rows: list[RunStats] = []
        self._limit = limit
        self._charted: list[
            tuple[tuple[int, ...], int]
        ] = []  # the least worth charting on top: least severe, then latest

    def add(self, row: RunStats) -> None:
        index = len(self.rows)
        self.rows.append(row)
        if not row.timeline:
            return
        heapq.heappush(self._charted, (tuple(-x for x in row.severity), -index))
        if len(self._charted) > self._limit:
            dropped = -heapq.heappop(self._charted)[1]
            self.rows[dropped] = dataclasses.replace(self.rows[dropped], timeline=(), timeline_calls=())


def breaker_configs(config: GuardConfig) -> dict[str, GuardConfig]:
    """One configuration per breaker that ``config`` turns on (the call cap aside: see
    ``_cap_markers``), keyed by the breaker's kind: that breaker alone, every other breaker
    section off, in memory and without an incident log. The breaker sections are read
    from ``GuardConfig`` (each section with an ``enabled`` switch), not listed here."""
    cb = dataclasses.replace(config.circuit_breaker, max_calls_per_agent=0)
    base = shadow_config(dataclasses.replace(config, circuit_breaker=cb))
    sections = breaker_sections(base)
    off = {name: dataclasses.replace(section, enabled=False) for name, section in sections.items()}
    alone: dict[str, GuardConfig] = {}
    for name, section in sections.items():
        if section.enabled:
            one = base.with_sections({**off, name: section})
            alone[_kind(one, name)] = one
    return alone


def breaker_sections(config: GuardConfig) -> dict[str, Any]:
    """Each breaker section ``config`` holds (a section with an ``enabled`` switch), by name;
    an absent section (``loop_brake`` unset) is no breaker."""
    return config.breaker_sections()


def _kind(one: GuardConfig, section: str) -> str:
    """The kind of the one breaker ``one`` builds (``circuit_breaker`` builds ``duplicate``);
    a section the guard runs outside the call breakers (``invalid``) by its own name."""
    kinds = [breaker.kind for breaker in build_breakers(one)]
    return kinds[0] if kinds else section


def breaker_markers(charted: Mapping[str, Source], config: GuardConfig) -> Markers:
    """For each charted source (by its shown path), the step where each breaker alone
    first denies, among the source's first ``MARKER_CALLS`` calls (read once)."""
    markers: Markers = {}
    alone = breaker_configs(config)
    cb = config.circuit_breaker
    for shown, source in charted.items():
        calls = list(itertools.islice(read_source(source, ReadTally()), MARKER_CALLS))
        for name, one in alone.items():
            for report in replay_calls(calls, Guard(one)):
                markers.setdefault((shown, report.run, report.agent), {})[name] = report.first_denial_step
        if cb.enabled and cb.max_calls_per_agent:
            _cap_markers(shown, calls, (cb.max_calls_per_agent, cb.exempt), markers)
    return markers


def _cap_markers(
    shown: str, calls: Sequence[ToolCall], cap: tuple[int, Sequence[str]], markers: Markers
) -> None:
    limit, exempt = cap
    counts: dict[tuple[str, str], int] = {}
    for call in calls:
        if call.tool in exempt or is_invalid(call):
            continue
        key = (call.run, call.agent)
        counts[key] = counts.get(key, 0) + 1
        if counts[key] == limit + 1:
            markers.setdefault((shown, *key), {})["cap"] = call.step
