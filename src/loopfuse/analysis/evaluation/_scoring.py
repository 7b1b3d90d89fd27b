"""Scoring guard configurations, and the published baselines, on a labeled corpus (the
format of the dev corpus).

Each trajectory is replayed call by call, every agent role on its own. A loop is caught
when the run's first denial falls at or after ``loop_start`` (the calls from
``loop_start`` up to that denial are the calls it took); any denial in a healthy run, or
before ``loop_start`` in a loop run, is a false positive.

A *detector* maps a trajectory's calls to the step of its first denial (None: never).
A guard configuration is one (:func:`guard_detector`); the three baselines are others.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ...guard import Guard
from ..replay import is_denial, is_invalid, replay_turn
from ..transcripts.base import ReadTally
from ..transcripts.model import ToolCall
from ._labels import read_labels, run_files
from ._read import read_run

__all__ = [
    "Comparison",
    "Detector",
    "GuardFactory",
    "Labeled",
    "Score",
    "TrajectoryResult",
    "compare",
    "format_table",
    "guard_detector",
    "is_invalid",
    "load_corpus",
    "score",
    "score_detector",
    "score_many",
    "truncated",
    "verdict",
    "without_invalid",
]

GuardFactory = Callable[[], Guard]
Detector = Callable[[Sequence[ToolCall]], int | None]


@dataclass(frozen=True)
class Labeled:
    """One labeled trajectory: its calls, ``label`` (loop or healthy) and ``loop_start``."""

    name: str
    calls: tuple[ToolCall, ...]
    label: str
    loop_start: int | None = None
    confidence: str | None = None


@dataclass(frozen=True)
class TrajectoryResult:
    name: str
    label: str
    first_denial: int | None
    caught: bool
    calls_after_start: int | None
    false_positive: bool
    confidence: str | None = None
    first_warning: int | None = None  # the step of the first warning (``warn_at``), if any


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

    @property
    def healthy_denied(self) -> int:
        return sum(r.false_positive for r in self.results if r.label != "loop")

    @property
    def early(self) -> int:
        return sum(r.false_positive for r in self.results if r.label == "loop")

    @property
    def healthy_warned(self) -> int:
        """Healthy runs in which the model was given a warning (a breaker's ``warn_at``)."""
        return sum(r.first_warning is not None for r in self.results if r.label != "loop")

    def delays_by_run(self) -> dict[str, int]:
        return {r.name: r.calls_after_start for r in self.results if r.calls_after_start is not None}

    def as_dict(self) -> dict[str, Any]:
        return {
            "config": self.name,
            "loops": self.loops,
            "caught": self.caught,
            "median_calls_after_loop_start": self.median_calls_after_start,
            "healthy": self.healthy,
            "false_positives": self.false_positives,
            "healthy_denied": self.healthy_denied,
            "denied_before_loop_start": self.early,
        }


def load_corpus(folder: str | Path, labels_path: str | Path, tally: ReadTally | None = None) -> list[Labeled]:
    """The labeled trajectories of ``folder`` (one file per trajectory, named as in labels).

    Normalized files are read with each call's whole ``output`` as its result (what a host
    passes to ``record_result``), falling back to ``output_excerpt``; runs named in an
    ``ambiguous.json`` beside the labels are not scored. Labels that are not a JSON object
    of ``{"label": "loop" or "healthy", "loop_start": step}``, or that name a run without a
    file in ``folder``, raise a ValueError that says which and why.
    """
    labels = read_labels(labels_path)
    left_out = _ambiguous(Path(labels_path).with_name("ambiguous.json"))
    files = run_files(Path(folder), labels_path, [name for name in labels if name not in left_out])
    return [_labeled(name, read_run(files[name], tally), labels[name]) for name in sorted(files)]


def _labeled(name: str, calls: tuple[ToolCall, ...], entry: Mapping[str, Any]) -> Labeled:
    """One run, its labels checked by ``read_labels``."""
    return Labeled(name, calls, entry["label"], entry.get("loop_start"), entry.get("confidence"))


def _ambiguous(path: Path) -> set[str]:
    try:
        found = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return set()
    return {str(name) for name in found} if isinstance(found, dict | list) else set()


def truncated(corpus: Iterable[Labeled], chars: int) -> list[Labeled]:
    """The corpus with each result cut to its first ``chars`` characters: what a host that
    keeps excerpts passes, or a tool whose errors are terse (they no longer tell calls apart)."""
    return [replace(item, calls=tuple(_cut(c, chars) for c in item.calls)) for item in corpus]


def _cut(call: ToolCall, chars: int) -> ToolCall:
    return call if call.result is None else replace(call, result=call.result[:chars])


def without_invalid(corpus: Iterable[Labeled]) -> list[Labeled]:
    """The corpus with its invalid turns dropped (only real tool calls left)."""
    return [replace(item, calls=tuple(c for c in item.calls if not is_invalid(c))) for item in corpus]


def guard_detector(factory: GuardFactory) -> Detector:
    """A fresh guard per trajectory: each call checked first, then (when allowed) its
    result reported, as a host would; each agent of a run is its own agent. The detector's
    ``last_warning`` is the step of the last trajectory's first warning (``warn_at``)."""
    return _GuardDetector(factory)


class _GuardDetector:
    def __init__(self, factory: GuardFactory) -> None:
        self._factory = factory
        self.last_warning: int | None = None

    def __call__(self, calls: Sequence[ToolCall]) -> int | None:
        guard, self.last_warning = self._factory(), None
        for call in calls:
            decision = replay_turn(guard, call, f"{call.run}/{call.agent}")
            if is_denial(decision):
                return call.step
            if self.last_warning is None and decision.warning is not None:
                self.last_warning = call.step
        return None


def verdict(item: Labeled, first: int | None) -> TrajectoryResult:
    """What a first denial at step ``first`` means for one trajectory's label."""
    conf = item.confidence
    if item.label != "loop" or item.loop_start is None:
        return TrajectoryResult(item.name, item.label, first, False, None, first is not None, conf)
    if first is None:
        return TrajectoryResult(item.name, item.label, None, False, None, False, conf)
    caught = first >= item.loop_start
    after = sum(1 for c in item.calls if item.loop_start <= c.step < first) if caught else None
    return TrajectoryResult(item.name, item.label, first, caught, after, not caught, conf)


def score_detector(name: str, detector: Detector, corpus: Iterable[Labeled]) -> Score:
    """One detector on the corpus."""
    result = Score(name)
    for item in corpus:
        outcome = verdict(item, detector(item.calls))
        warned = getattr(detector, "last_warning", None)  # a guard detector's (warn_at)
        outcome = replace(outcome, first_warning=warned) if warned is not None else outcome
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


def score(name: str, factory: GuardFactory, corpus: Iterable[Labeled]) -> Score:
    """One configuration on the corpus; ``factory`` makes a fresh guard per trajectory. Each
    result also tells where the model was first warned."""
    return score_detector(name, guard_detector(factory), corpus)


def score_many(factories: Sequence[tuple[str, GuardFactory]], corpus: Sequence[Labeled]) -> list[Score]:
    """Several named configurations on one corpus, in the order given."""
    return [score(name, factory, corpus) for name, factory in factories]


@dataclass(frozen=True)
class Comparison:
    """Two scores on the loops both catch: medians, and per loop who denied first."""

    common: int
    ours: float | None
    theirs: float | None
    earlier: int
    tied: int
    later: int

    def describe(self) -> str:
        if not self.common:
            return "no loop caught by both"
        return (
            f"on the {self.common} loops both catch: median {self.ours:g} against {self.theirs:g}; "
            f"earlier on {self.earlier}, tied on {self.tied}, later on {self.later}"
        )


def compare(ours: Score, theirs: Score) -> Comparison:
    """``ours`` against ``theirs`` on the loops both catch."""
    mine, other = ours.delays_by_run(), theirs.delays_by_run()
    common = sorted(set(mine) & set(other))
    if not common:
        return Comparison(0, None, None, 0, 0, 0)
    return Comparison(
        len(common),
        statistics.median(mine[r] for r in common),
        statistics.median(other[r] for r in common),
        sum(mine[r] < other[r] for r in common),
        sum(mine[r] == other[r] for r in common),
        sum(mine[r] > other[r] for r in common),
    )


def format_table(scores: Iterable[Score]) -> str:
    """The comparison table: loops caught, median calls after loop_start, false positives
    (healthy runs denied, and loop runs denied before ``loop_start``)."""
    header = (
        f"{'configuration':<36} {'loops caught':>13} {'median after start':>19} "
        f"{'false positives':>16} {'healthy':>8} {'early':>6}"
    )
    lines = [header, "-" * len(header)]
    for s in scores:
        median = "-" if s.median_calls_after_start is None else f"{s.median_calls_after_start:g}"
        fp = f"{s.false_positives}/{s.loops + s.healthy}"
        lines.append(
            f"{s.name:<36} {f'{s.caught}/{s.loops}':>13} {median:>19} {fp:>16} "
            f"{s.healthy_denied:>8} {s.early:>6}"
        )
    return "\n".join(lines)
