"""Old import path, kept working: the same objects as ``loopfuse.analysis.scanstats``."""

from __future__ import annotations

from .analysis.scanstats import (
    COUNT_CAP,
    LABEL_ARGS,
    LOOP_CYCLE,
    LOOP_RUN,
    LOOP_RUN_CHANGING,
    SUSPECT_CYCLE,
    SUSPECT_REPEATS,
    SUSPECT_RUN,
    TIMELINE_LANES,
    TIMELINE_POINTS,
    CallStats,
    RunStats,
    scan_calls,
    worst_first,
)

__all__ = [
    "COUNT_CAP",
    "LABEL_ARGS",
    "LOOP_CYCLE",
    "LOOP_RUN",
    "LOOP_RUN_CHANGING",
    "SUSPECT_CYCLE",
    "SUSPECT_REPEATS",
    "SUSPECT_RUN",
    "TIMELINE_LANES",
    "TIMELINE_POINTS",
    "CallStats",
    "RunStats",
    "scan_calls",
    "worst_first",
]
