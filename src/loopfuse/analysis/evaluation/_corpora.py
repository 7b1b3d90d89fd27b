"""Several labeled corpora, each scored on its own and in total, with the split by the
labels' ``confidence``."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..transcripts.base import ReadTally
from ._scoring import Detector, Labeled, Score, TrajectoryResult, load_corpus, score_detector

__all__ = ["Corpus", "format_corpora", "format_corpus_table", "load_corpora", "merge", "score_corpora"]

TOTAL = "all"


@dataclass(frozen=True)
class Corpus:
    """One labeled corpus: its name (the folder's) and its runs."""

    name: str
    runs: tuple[Labeled, ...]


def load_corpora(root: str | Path, tally: ReadTally | None = None) -> list[Corpus]:
    """The corpus at ``root`` (a folder with ``labels.json``), or every subfolder of
    ``root`` that has one, by name."""
    base = Path(root)
    folders = [base] if (base / "labels.json").is_file() else sorted(base.iterdir())
    return [
        Corpus(folder.name, tuple(load_corpus(folder, folder / "labels.json", tally)))
        for folder in folders
        if (folder / "labels.json").is_file()
    ]


def score_corpora(
    detectors: Sequence[tuple[str, Detector]], corpora: Sequence[Corpus]
) -> dict[str, list[Score]]:
    """Per corpus name, then ``"all"``: each detector's score, in the order given."""
    table = {c.name: [score_detector(name, d, c.runs) for name, d in detectors] for c in corpora}
    table[TOTAL] = [
        merge(name, [scores[i] for scores in table.values()]) for i, (name, _) in enumerate(detectors)
    ]
    return table


def merge(name: str, scores: Iterable[Score]) -> Score:
    """One score over several corpora's runs."""
    total = Score(name)
    for s in scores:
        total.loops += s.loops
        total.caught += s.caught
        total.healthy += s.healthy
        total.false_positives += s.false_positives
        total.delays.extend(s.delays)
        total.results.extend(s.results)
    return total


def by_confidence(results: Iterable[TrajectoryResult], label: str) -> dict[str, list[TrajectoryResult]]:
    """The results of runs labeled ``label``, grouped by the label's confidence."""
    groups: dict[str, list[TrajectoryResult]] = {}
    for r in results:
        if (r.label == "loop") == (label == "loop"):
            groups.setdefault(r.confidence or "-", []).append(r)
    return dict(sorted(groups.items()))


def _split(s: Score, label: str) -> str:
    groups = by_confidence(s.results, label)
    if len(groups) < 2 and "-" in groups:
        return ""
    hits = {
        conf: sum(r.caught if label == "loop" else r.false_positive for r in rs)
        for conf, rs in groups.items()
    }
    return " ".join(f"{conf[0]} {hits[conf]}/{len(rs)}" for conf, rs in groups.items())


HEADER = (
    f"{'configuration':<40} {'caught':>7} {'by confidence':>15} {'median after':>12} "
    f"{'healthy denied':>14} {'by confidence':>15} {'early':>5} {'warned':>6}"
)


def format_corpus_table(title: str, scores: Iterable[Score]) -> str:
    """One corpus's table: loops caught, median calls after loop_start, healthy runs
    denied, denials before loop_start, healthy runs warned; caught and denied split by
    confidence (h/m)."""
    lines = [title, HEADER, "-" * len(HEADER)]
    for s in scores:
        median = "-" if s.median_calls_after_start is None else f"{s.median_calls_after_start:g}"
        lines.append(
            f"{s.name:<40} {f'{s.caught}/{s.loops}':>7} {_split(s, 'loop'):>15} {median:>12} "
            f"{f'{s.healthy_denied}/{s.healthy}':>14} {_split(s, 'healthy'):>15} {s.early:>5} "
            f"{s.healthy_warned:>6}"
        )
    return "\n".join(lines)


def format_corpora(table: dict[str, list[Score]], corpora: Sequence[Corpus]) -> str:
    """Every corpus's table, then the total."""
    sizes = {c.name: len(c.runs) for c in corpora}
    sizes[TOTAL] = sum(sizes.values())
    return "\n\n".join(
        format_corpus_table(f"{name} ({sizes[name]} runs)", scores) for name, scores in table.items()
    )
