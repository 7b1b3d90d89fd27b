"""Loop statistics and the guard's verdict over a recorded call stream, in O(1) memory per
agent run.

Per agent run: duration, calls, distinct calls, the most repeated call, the longest run
of identical calls in a row, the longest repeated cycle (a block of 2-3 different calls
repeated back to back), the step where repetition starts, and a verdict.

The verdict comes from the breakers, not from these statistics: each agent run is replayed
through a guard (``loopfuse.replay``, shadow mode, results reported as recorded), so
``scan``, ``replay``, ``eval`` and the guard agree on what a loop is. ``loop``: a breaker
denies a call (the row names the first, its rule and its step); ``suspect``: none does, but
the statistics show repetition (``SUSPECT_RUN`` identical calls in a row, a cycle repeated
``SUSPECT_CYCLE`` times, or one call made ``SUSPECT_REPEATS`` times); ``ok``: neither.

The statistics' own estimate of where a loop starts (``loop_start``) is kept as a column:
the first of ``LOOP_RUN`` identical calls in a row whose results do not
change (or are not recorded), of ``LOOP_RUN_CHANGING`` identical calls in a row whose
results do change (paging through a file is progress for a while), or at the first call
of a 2-3 call block repeated ``LOOP_CYCLE`` times back to back. These thresholds follow
the labels of the development corpus.

Memory is bounded per agent, and only the agents of the run being read are kept (each is
forgotten by the guard when its run ends): exact counts are kept for the first ``COUNT_CAP``
distinct calls (later ones only enter the distinct-call estimate, a k-minimum-values sketch).
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field
from typing import Any

from .._calls import canonical_json
from ..config import GuardConfig
from ..guard import Guard
from .replay import ReplayDenial, ShadowAgent, shadow_config
from .transcripts.model import ToolCall

__all__ = ["CallStats", "RunStats", "run_verdict", "scan_calls", "worst_first"]

LOOP_RUN = 5
LOOP_RUN_CHANGING = 10
LOOP_CYCLE = 7
SUSPECT_RUN = 3
SUSPECT_CYCLE = 4
SUSPECT_REPEATS = 10
COUNT_CAP = 4096
TIMELINE_POINTS = 2000
TIMELINE_LANES = 48
LABEL_ARGS = 80  # characters of a call's arguments shown on a chart (with --show-args)
_SKETCH = 1024
_MASK = (1 << 64) - 1
_RANK = {"loop": 0, "suspect": 1, "ok": 2}


@dataclass(frozen=True)
class RunStats:
    """One row of ``loopfuse scan``: one agent of one recorded run. ``breaker``, ``rule``
    and ``denied_at`` name the guard's first denial (None when it denies nothing)."""

    run: str
    agent: str
    calls: int
    distinct: int
    distinct_exact: bool
    duration: float | None
    failed: int
    top_count: int
    top_tool: str | None
    top_args: str | None
    longest_run: int
    longest_run_tool: str | None
    longest_run_step: int | None
    cycle_repeats: int
    cycle_period: int
    cycle_step: int | None
    loop_start: int | None
    verdict: str
    timeline: tuple[tuple[int, int, int], ...] = field(default=(), repr=False)  # step, lane, call
    timeline_calls: tuple[str, ...] = field(default=(), repr=False)  # what each call of a timeline is
    path: str = ""
    breaker: str | None = None
    rule: str | None = None
    denied_at: int | None = None

    def as_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out.pop("timeline")
        out.pop("timeline_calls")
        if out["top_args"] is None:
            out.pop("top_args")
        return out

    @property
    def distinct_text(self) -> str:
        return str(self.distinct) if self.distinct_exact else f"~{self.distinct}"

    @property
    def duration_text(self) -> str:
        if self.duration is None:
            return "-"
        if self.duration < 120:
            return f"{self.duration:.0f}s"
        minutes = self.duration / 60
        return f"{minutes:.0f}m" if minutes < 120 else f"{minutes / 60:.1f}h"

    @property
    def top_text(self) -> str:
        return f"{self.top_count}x {self.top_tool or '-'}"

    @property
    def cycle_text(self) -> str:
        return f"{self.cycle_repeats}x{self.cycle_period}" if self.cycle_repeats else "-"

    @property
    def loop_start_text(self) -> str:
        return "-" if self.loop_start is None else str(self.loop_start)

    @property
    def denied_at_text(self) -> str:
        return "-" if self.denied_at is None else str(self.denied_at)

    @property
    def severity(self) -> tuple[int, int, int]:
        span = max(self.longest_run, self.cycle_repeats * self.cycle_period)
        return (_RANK[self.verdict], -span, -self.calls)


class _Streak:
    """The current run of identical calls."""

    __slots__ = ("changed", "key", "length", "result", "start", "tool")

    def __init__(self) -> None:
        self.key: int | None = None
        self.length = 0
        self.start = 0
        self.tool = ""
        self.result: int | None = None
        self.changed = False


class CallStats:
    """The running statistics of one agent run; feed calls in order with ``add``."""

    def __init__(self, run: str, agent: str, *, keep_args: bool = False, timeline: bool = False) -> None:
        self.run, self.agent = run, agent
        self._keep_args, self._timeline_on = keep_args, timeline
        self.calls = self.failed = 0
        self._first: float | None = None
        self._last: float | None = None
        self._counts: dict[int, int] = {}
        self._top: tuple[int, str, str | None] = (0, "", None)  # count, tool, args text
        self._sketch: list[int] = []
        self._sketched: set[int] = set()
        self._streak = _Streak()
        self._longest: tuple[int, str | None, int | None] = (0, None, None)  # length, tool, step
        self._recent: list[tuple[int, int]] = []  # last 3 (key, step)
        self._cycles = {2: [0, 0], 3: [0, 0]}  # period -> [matches in a row, start step]
        self._cycle: tuple[int, int, int | None] = (0, 0, None)  # repeats, period, step
        self._loop_start: int | None = None
        self._lanes: dict[int, tuple[int, int]] = {}  # call key -> lane, index in _calls
        self._calls: list[str] = []
        self._timeline: list[tuple[int, int, int]] = []

    def add(self, call: ToolCall) -> None:
        text = _identity(call)
        key = hash((call.tool, text)) & _MASK
        self.calls += 1
        self.failed += call.ok is False
        self._clock(call.time)
        self._count(key, call.tool, text)
        self._sketch_add(key)
        self._streak_add(key, call)
        self._cycle_add(key, call.step)
        if self._timeline_on and len(self._timeline) < TIMELINE_POINTS:
            self._timeline_add(key, call, text)

    def _timeline_add(self, key: int, call: ToolCall, text: str) -> None:
        found = self._lanes.get(key)
        if found is None:
            found = self._lanes[key] = (min(len(self._lanes), TIMELINE_LANES), len(self._calls))
            label = f"{call.tool} {text[:LABEL_ARGS]}" if self._keep_args else call.tool
            self._calls.append(label + ("..." if self._keep_args and len(text) > LABEL_ARGS else ""))
        self._timeline.append((call.step, *found))

    def _clock(self, time: float | None) -> None:
        if time is None or not math.isfinite(time):  # Infinity would print as invalid JSON
            return
        self._first = time if self._first is None else min(self._first, time)
        self._last = time if self._last is None else max(self._last, time)

    def _count(self, key: int, tool: str, text: str) -> None:
        count = self._counts.get(key)
        if count is None and len(self._counts) >= COUNT_CAP:
            return
        count = (count or 0) + 1
        self._counts[key] = count
        if count > self._top[0]:
            self._top = (count, tool, text if self._keep_args else None)

    def _sketch_add(self, key: int) -> None:
        if key in self._sketched:
            return
        if len(self._sketch) < _SKETCH:
            heapq.heappush(self._sketch, -key)
            self._sketched.add(key)
        elif key < -self._sketch[0]:
            self._sketched.discard(-heapq.heapreplace(self._sketch, -key))
            self._sketched.add(key)

    def _streak_add(self, key: int, call: ToolCall) -> None:
        s = self._streak
        result = None if call.result is None else hash(call.result)
        if key != s.key:
            s.key, s.length, s.start, s.tool, s.result, s.changed = (
                key,
                0,
                call.step,
                call.tool,
                result,
                False,
            )
        s.length += 1
        s.changed = s.changed or result != s.result
        if s.length > self._longest[0]:
            self._longest = (s.length, s.tool, s.start)
        limit = LOOP_RUN_CHANGING if s.changed else LOOP_RUN
        if s.length >= limit and self._loop_start is None:
            self._loop_start = s.start

    def _cycle_add(self, key: int, step: int) -> None:
        recent = self._recent
        for period, state in self._cycles.items():
            block = recent[-period:]
            if len(block) == period and block[0][0] == key and len({k for k, _ in block}) > 1:
                if state[0] == 0:
                    state[1] = block[0][1]
                state[0] += 1
                self._cycle_seen(period, state)
            else:
                state[0] = 0
        recent.append((key, step))
        if len(recent) > 3:
            del recent[0]

    def _cycle_seen(self, period: int, state: list[int]) -> None:
        repeats = (state[0] + period) // period
        if repeats >= 2 and repeats > self._cycle[0]:
            self._cycle = (repeats, period, state[1])
        if repeats >= LOOP_CYCLE and self._loop_start is None:
            self._loop_start = state[1]

    def distinct(self) -> tuple[int, bool]:
        """The number of distinct calls, and whether it is exact."""
        if len(self._counts) < COUNT_CAP or len(self._sketch) < _SKETCH:
            return (len(self._counts) if len(self._counts) < COUNT_CAP else len(self._sketched)), True
        kth = -self._sketch[0] / float(_MASK)
        return int((_SKETCH - 1) / kth), False

    def finish(self, denial: ReplayDenial | None = None) -> RunStats:
        """The row; ``denial`` is the guard's first for this agent (None: it denied nothing)."""
        distinct, exact = self.distinct()
        duration = None if self._first is None or self._last is None else self._last - self._first
        count, tool, args = self._top
        return RunStats(
            self.run, self.agent, self.calls, distinct, exact, duration, self.failed,
            count, tool or None, args, self._longest[0], self._longest[1], self._longest[2],
            self._cycle[0], self._cycle[1], self._cycle[2], self._loop_start,
            run_verdict(denial, self.repetitive()), tuple(self._timeline), tuple(self._calls),
            **_first_denial(denial),
        )  # fmt: skip

    def repetitive(self) -> bool:
        """Whether the statistics show repetition worth a look (what makes a run ``suspect``)."""
        repeated = self._top[0] >= SUSPECT_REPEATS
        return self._longest[0] >= SUSPECT_RUN or self._cycle[0] >= SUSPECT_CYCLE or repeated


def _first_denial(denial: ReplayDenial | None) -> dict[str, Any]:
    if denial is None:
        return {}
    return {"breaker": denial.kind, "rule": denial.rule or None, "denied_at": denial.step}


def run_verdict(denial: ReplayDenial | None, repetitive: bool) -> str:
    """``loop`` when the guard denied a call, else ``suspect`` when the statistics show
    repetition, else ``ok``."""
    if denial is not None:
        return "loop"
    return "suspect" if repetitive else "ok"


def _identity(call: ToolCall) -> str:
    try:
        return canonical_json(call.args)
    except (TypeError, ValueError, RecursionError, OverflowError):
        return repr(call.args)


def scan_calls(
    calls: Iterable[ToolCall],
    *,
    keep_args: bool = False,
    timeline: bool = False,
    guard: Guard | None = None,
) -> Iterator[RunStats]:
    """One ``RunStats`` per (run, agent); a run's agents are reported, and forgotten by
    ``guard``, when the run changes. ``guard`` decides the verdicts (default: a guard with
    the default configuration; give it ``replay.shadow_config(config)``)."""
    guard = guard if guard is not None else Guard(shadow_config(GuardConfig()))
    run: str | None = None
    active: dict[str, tuple[CallStats, ShadowAgent]] = {}
    for call in calls:
        if call.run != run:
            yield from _finished(active)
            run, active = call.run, {}
        pair = active.get(call.agent)
        if pair is None:
            stats = CallStats(call.run, call.agent, keep_args=keep_args, timeline=timeline)
            pair = active[call.agent] = (stats, ShadowAgent(guard, call.run, call.agent))
        pair[0].add(call)
        pair[1].add(call)
    yield from _finished(active)


def _finished(active: dict[str, tuple[CallStats, ShadowAgent]]) -> Iterator[RunStats]:
    for stats, shadow in active.values():
        shadow.close()
        yield stats.finish(shadow.denial)


def worst_first(rows: Iterable[RunStats]) -> list[RunStats]:
    return sorted(rows, key=lambda r: r.severity)
