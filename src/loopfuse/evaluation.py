"""Scoring guard configurations on a labeled corpus (the format of the dev corpus).

Each trajectory is replayed call by call through a fresh guard, every agent role on its
own. A loop is caught when the run's first denial falls at or after ``loop_start``
(the calls from ``loop_start`` up to that denial are the calls it took); any denial in a
healthy run, or before ``loop_start`` in a loop run, is a false positive.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .guard import Guard
from .replay import replay_calls
from .transcripts.base import ReadTally
from .transcripts.detect import read_path
from .transcripts.model import ToolCall

__all__ = ["Labeled", "Score", "TrajectoryResult", "format_table", "load_corpus", "score", "score_many"]

GuardFactory = Callable[[], Guard]


@dataclass(frozen=True)
class Labeled:
    """One labeled trajectory: its calls, ``label`` (loop or healthy) and ``loop_start``."""

    name: str
    calls: tuple[ToolCall, ...]
    label: str
    loop_start: int | None = None


@dataclass(frozen=True)
class TrajectoryResult:
    name: str
    label: str
    first_denial: int | None
    caught: bool
    calls_after_start: int | None
    false_positive: bool


@dataclass
class Score:
    """One configuration's result on the corpus."""

    name: str
    loops: int = 0
    caught: int = 0
    healthy: int = 0
    false_positives: int = 0
    delays: list[int] = field(default_factory=list)
    results: list[TrajectoryResult] = field(default_factory=list)

    @property
    def median_calls_after_start(self) -> float | None:
        return statistics.median(self.delays) if self.delays else None

    def as_dict(self) -> dict[str, Any]:
        return {
            "config": self.name,
            "loops": self.loops,
            "caught": self.caught,
            "median_calls_after_loop_start": self.median_calls_after_start,
            "healthy": self.healthy,
            "false_positives": self.false_positives,
        }


def load_corpus(folder: str | Path, labels_path: str | Path, tally: ReadTally | None = None) -> list[Labeled]:
    """The labeled trajectories of ``folder`` (one file per trajectory, named as in labels)."""
    labels: Mapping[str, Any] = json.loads(Path(labels_path).read_text(encoding="utf-8"))
    corpus: list[Labeled] = []
    for name, entry in sorted(labels.items()):
        files = [p for p in Path(folder).glob(f"{name}.*") if p.is_file()]
        if not files or not isinstance(entry, dict):
            continue
        calls = tuple(read_path(files[0], tally))
        start = entry.get("loop_start")
        corpus.append(
            Labeled(name, calls, str(entry.get("label")), start if isinstance(start, int) else None)
        )
    return corpus


def judge(item: Labeled, guard: Guard) -> TrajectoryResult:
    """Where ``guard`` first denies in one trajectory, and what that means for its label."""
    reports = replay_calls(item.calls, guard)
    steps = [d.step for r in reports for d in r.denials]
    first = min(steps) if steps else None
    if item.label != "loop" or item.loop_start is None:
        return TrajectoryResult(item.name, item.label, first, False, None, first is not None)
    if first is None:
        return TrajectoryResult(item.name, item.label, None, False, None, False)
    caught = first >= item.loop_start
    after = sum(1 for c in item.calls if item.loop_start <= c.step < first) if caught else None
    return TrajectoryResult(item.name, item.label, first, caught, after, not caught)


def score(name: str, factory: GuardFactory, corpus: Iterable[Labeled]) -> Score:
    """One configuration on the corpus; ``factory`` makes a fresh guard per trajectory."""
    result = Score(name)
    for item in corpus:
        outcome = judge(item, factory())
        result.results.append(outcome)
        if item.label == "loop":
            result.loops += 1
            result.caught += outcome.caught
            if outcome.calls_after_start is not None:
                result.delays.append(outcome.calls_after_start)
        else:
            result.healthy += 1
        result.false_positives += outcome.false_positive
    return result


def score_many(factories: Sequence[tuple[str, GuardFactory]], corpus: Sequence[Labeled]) -> list[Score]:
    """Several named configurations on one corpus, in the order given."""
    return [score(name, factory, corpus) for name, factory in factories]


def format_table(scores: Iterable[Score]) -> str:
    """The comparison table: loops caught, median calls after loop_start, false positives."""
    header = (
        f"{'configuration':<28} {'loops caught':>13} {'median calls after start':>25} {'false positives':>16}"
    )
    lines = [header, "-" * len(header)]
    for s in scores:
        median = "-" if s.median_calls_after_start is None else f"{s.median_calls_after_start:g}"
        fp = f"{s.false_positives}/{s.loops + s.healthy}"
        lines.append(f"{s.name:<28} {f'{s.caught}/{s.loops}':>13} {median:>25} {fp:>16}")
    return "\n".join(lines)
