"""Scoring guard configurations, and the anchor rules of other hosts, on labeled corpora.

Each trajectory is replayed call by call, every agent role on its own: each call is
checked first, then its whole recorded result (``output``) and ``ok`` are reported, as a
host would. A loop is caught when the run's first denial falls at or after
``loop_start``; any denial in a healthy run, or before ``loop_start`` in a loop run, is a
false positive. Corpora are scored each on its own and in total, and limits are judged
leave-one-corpus-out (:func:`loco`).
"""

from __future__ import annotations

from ..replay import is_invalid
from ._anchors import (
    anchors,
    baselines,
    identical_failures,
    identical_in_a_row,
    identical_pairs,
    repeated_in_window,
)
from ._corpora import Corpus, format_corpora, format_corpus_table, load_corpora, merge, score_corpora
from ._loco import GRID, Fold, Grid, config_for, format_loco, loco
from ._scoring import (
    Comparison,
    Detector,
    GuardFactory,
    Labeled,
    Score,
    TrajectoryResult,
    compare,
    format_table,
    guard_detector,
    load_corpus,
    score,
    score_detector,
    score_many,
    truncated,
    verdict,
    without_invalid,
)

__all__ = [
    "GRID",
    "Comparison",
    "Corpus",
    "Detector",
    "Fold",
    "Grid",
    "GuardFactory",
    "Labeled",
    "Score",
    "TrajectoryResult",
    "anchors",
    "baselines",
    "compare",
    "config_for",
    "format_corpora",
    "format_corpus_table",
    "format_loco",
    "format_table",
    "guard_detector",
    "identical_failures",
    "identical_in_a_row",
    "identical_pairs",
    "is_invalid",
    "load_corpora",
    "load_corpus",
    "loco",
    "merge",
    "repeated_in_window",
    "score",
    "score_corpora",
    "score_detector",
    "score_many",
    "truncated",
    "verdict",
    "without_invalid",
]
