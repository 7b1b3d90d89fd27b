"""Detection on the labeled corpora: each breaker alone, the default, the anchor rules.

    PYTHONPATH=src python bench/detection_eval.py [CORPORA_DIR | CORPUS_DIR]

Given a folder of corpora (default: ../shared/corpus), one table per corpus and the total,
then per corpus the loops the default misses or denies early and the healthy runs it denies,
then the leave-one-corpus-out table. Given one corpus folder (with labels.json), the
single-corpus report below.

Scoring is ``loopfuse.analysis.evaluation`` (the same as ``loopfuse eval``): every trajectory is
replayed call by call, each agent role as its own agent, reporting each allowed call's
result (the whole ``output``, ``ok``) as an adapter would. A loop run is caught when its
first denial falls at or after ``loop_start``; any denial in a healthy run, or before
``loop_start`` in a loop run, is a false positive. "after" is the median number of calls
from ``loop_start`` to the first denial over the caught loops.

Then: the default against each baseline loop by loop, and the trade-off that decides how
soon the default can deny without denying a healthy run.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from loopfuse import Guard
from loopfuse.analysis.evaluation import (
    Labeled,
    Score,
    baselines,
    compare,
    load_corpus,
    score,
    score_detector,
)

CORPORA = Path(__file__).resolve().parents[1] / ".." / "shared" / "corpus"
DEFAULT_CORPUS = CORPORA / "dev"

_OFF = {"enabled": False}
_ALONE_BASE = {
    "circuit_breaker": _OFF,
    "cycle": _OFF,
    "near_duplicate": _OFF,
    "same_error": _OFF,
    "stall": _OFF,
    "failures": _OFF,
}


def _alone(section: str, body: Mapping[str, Any]) -> dict[str, Any]:
    return {**_ALONE_BASE, section: dict(body)}


CONFIGURATIONS: dict[str, Mapping[str, Any]] = {
    "window, results ignored (issue-2 rules)": _alone(
        "circuit_breaker", {"max_calls_per_agent": 0, "result_aware": False, "progress_limit": 0}
    ),
    "window, result-aware (defaults)": _alone("circuit_breaker", {"max_calls_per_agent": 0}),
    "loop brake 3 (plain)": _alone("loop_brake", {"max_repeats": 3}),
    "loop brake 3, result-aware": _alone("loop_brake", {"max_repeats": 3, "result_aware": True}),
    "cycle (max_period 4, min_repeats 3)": _alone("cycle", {}),
    "near_duplicate (limit 8, window 50)": _alone("near_duplicate", {}),
    "same_error (limit 10, identical_limit 4)": _alone("same_error", {}),
    "stall (limit 8, error_limit 4)": _alone("stall", {}),
    "failures (limit 15)": _alone("failures", {}),
    "default: Guard()": {},
}

TRADE_OFFS: dict[str, Mapping[str, Any]] = {
    "same_result_limit 4": {"circuit_breaker": {"same_result_limit": 4}},
    "progress_limit 6": {"circuit_breaker": {"progress_limit": 6}},
    "progress_limit 5": {"circuit_breaker": {"progress_limit": 5}},
    "same_error identical_limit 3": {"same_error": {"identical_limit": 3}},
}

HEADER = (
    f"| {'configuration':<44} | {'caught':>6} | {'after':>5} | {'FP':>3} | {'healthy':>7} | {'early':>5} |\n"
    f"|{'-' * 46}|{'-' * 8}|{'-' * 7}|{'-' * 5}|{'-' * 9}|{'-' * 7}|"
)


def row(s: Score) -> str:
    after = "-" if s.median_calls_after_start is None else f"{s.median_calls_after_start:g}"
    caught = f"{s.caught}/{s.loops}"
    return f"| {s.name:<44} | {caught:>6} | {after:>5} | {s.false_positives:>3} | {s.healthy_denied:>7} | {s.early:>5} |"


def configured(name: str, config: Mapping[str, Any], corpus: list[Labeled]) -> Score:
    return score(name, lambda: Guard.from_config(config), corpus)


def per_loop(corpus: list[Labeled], labels: Mapping[str, Any], scores: list[Score]) -> None:
    """Calls after loop_start per loop run: '-' missed, 'early' denied before it."""
    print("| loop run | kind | " + " | ".join(s.name.removeprefix("baseline: ") for s in scores) + " |")
    by_run = [{r.name: r for r in s.results} for s in scores]
    for item in corpus:
        if item.label != "loop":
            continue
        cells = [_cell(results[item.name]) for results in by_run]
        kind = f"{labels[item.name].get('loop_kind')} ({labels[item.name].get('confidence')})"
        print(f"| {item.name.removeprefix('coder__')} | {kind} | " + " | ".join(cells) + " |")


def _cell(result: Any) -> str:
    if result.calls_after_start is not None:
        return str(result.calls_after_start)
    return "early" if result.false_positive else "-"


def corpus_from(argv: list[str]) -> tuple[Path, list[Labeled]] | None:
    """The labeled corpus named on the command line (default: the dev corpus), or None."""
    root = Path(argv[1]) if len(argv) > 1 else DEFAULT_CORPUS
    if not (root / "labels.json").is_file():
        print(f"no labeled corpus at {root}")
        return None
    return root, load_corpus(root, root / "labels.json")


def main(argv: list[str]) -> int:
    root = Path(argv[1]) if len(argv) > 1 else CORPORA
    if not (root / "labels.json").is_file():
        from detection_corpora import report

        return report(root, CONFIGURATIONS)
    found = corpus_from(argv)
    if found is None:
        return 1
    root, corpus = found
    labels = json.loads((root / "labels.json").read_text(encoding="utf-8"))
    print(f"{len(corpus)} runs ({sum(i.label != 'loop' for i in corpus)} healthy) from {root.resolve()}")
    print(HEADER)
    scores = [configured(name, c, corpus) for name, c in CONFIGURATIONS.items()]
    others = [score_detector(name, d, corpus) for name, d in baselines()]
    for s in scores + others:
        print(row(s))
    ours = scores[-1]
    print()
    for other in others:
        print(f"default against {other.name}: {compare(ours, other).describe()}")
    print("\nper loop, calls after loop_start until the first denial:")
    per_loop(corpus, labels, [ours, *others])
    print("\ntrade-offs: the default with one limit tightened")
    print(HEADER)
    for name, config in TRADE_OFFS.items():
        print(row(configured(f"default, {name}", config, corpus)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
