"""The multi-corpus report of ``bench/detection_eval.py``: one table per corpus and the total,
what the default misses and denies (with the first denial's breaker), the invalid-turn
variant, and leave-one-corpus-out."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from loopfuse import Guard
from loopfuse.analysis.evaluation import (
    Corpus,
    Labeled,
    Score,
    anchors,
    format_corpora,
    format_loco,
    guard_detector,
    is_invalid,
    load_corpora,
    loco,
    score_corpora,
    truncated,
    without_invalid,
)
from loopfuse.analysis.replay import replay_calls


def report(root: Path, configurations: Mapping[str, Mapping[str, Any]]) -> int:
    corpora = load_corpora(root) if root.is_dir() else []
    if not corpora:
        print(f"no labeled corpora at {root}")
        return 1
    print(f"{sum(len(c.runs) for c in corpora)} runs in {len(corpora)} corpora from {root.resolve()}\n")
    detectors = [(n, guard_detector(_factory(c))) for n, c in configurations.items()] + anchors()
    table = score_corpora(detectors, corpora)
    print(format_corpora(table, corpora))
    default_at = list(configurations).index("default: Guard()")
    for corpus in corpora:
        _misses(
            root / corpus.name,
            corpus,
            table[corpus.name][default_at],
            table[corpus.name][len(configurations) :],
        )
    _invalid(corpora, detectors)
    print("\nleave-one-corpus-out: limits chosen on the other corpora, scored on the one held out")
    print(format_loco(loco(corpora), {name: scores[default_at] for name, scores in table.items()}))
    _excerpts(corpora)
    return 0


EXCERPTS = (None, 1000, 500, 200, 100)


def _excerpts(corpora: list[Corpus]) -> None:
    """The default with each result cut to its first characters, as a host that keeps
    excerpts passes it (or as tools with terse errors read): caught, healthy denied, early."""
    print("\nthe default with each result cut to its first N characters: caught, healthy denied, early")
    print(f"{'N':>6}  " + "  ".join(f"{c.name:>24}" for c in corpora))
    for chars in EXCERPTS:
        cut = [c if chars is None else Corpus(c.name, tuple(truncated(c.runs, chars))) for c in corpora]
        table = score_corpora([("default", guard_detector(Guard))], cut)
        cells = [_excerpt_cell(table[c.name][0]) for c in corpora]
        print(f"{'whole' if chars is None else chars:>6}  " + "  ".join(cells))
    table = score_corpora([("default", guard_detector(Guard))], [_without_ok(c) for c in corpora])
    print(f"{'no ok':>6}  " + "  ".join(_excerpt_cell(table[c.name][0]) for c in corpora))
    print("(no ok: whole results, none marked as an error, as from a host that does not pass ok=)")


def _without_ok(corpus: Corpus) -> Corpus:
    runs = (replace(run, calls=tuple(replace(c, ok=None) for c in run.calls)) for run in corpus.runs)
    return Corpus(corpus.name, tuple(runs))


def _excerpt_cell(s: Score) -> str:
    return f"{f'{s.caught}/{s.loops}':>7} {f'{s.healthy_denied}/{s.healthy}':>7} {s.early:>8}".rjust(24)


def _factory(config: Mapping[str, Any]) -> Any:
    return lambda: Guard.from_config(config)


def _misses(folder: Path, corpus: Corpus, default: Score, others: list[Score]) -> None:
    labels = json.loads((folder / "labels.json").read_text(encoding="utf-8"))
    runs = {run.name: run for run in corpus.runs}
    print(
        f"\n{corpus.name}: what the default misses or denies (first denial's breaker; anchors that catch it)"
    )
    for result in default.results:
        if result.caught or (result.label != "loop" and not result.false_positive):
            continue
        entry = labels[result.name]
        what = "missed" if result.label == "loop" and not result.false_positive else "DENIED"
        if result.label == "loop" and result.false_positive:
            what = f"early (step {result.first_denial} < {entry.get('loop_start')})"
        kind = entry.get("loop_kind") or entry.get("legit_repetition") or "ordinary"
        catchers = [s.name.split(":")[0] for s in others if _caught(s, result.name)]
        print(f"- {result.name} [{result.label}, {kind}, {entry.get('confidence')}] {what}"
              f"{_breaker(runs[result.name])}; anchors: {', '.join(catchers) or 'none'}")  # fmt: skip
        print(f"    {str(entry.get('notes'))[:160]}")


def _caught(s: Score, name: str) -> bool:
    return any(r.name == name and r.caught for r in s.results)


def _breaker(run: Labeled) -> str:
    denials = [d for r in replay_calls(run.calls, Guard()) for d in r.denials]
    first = min(denials, key=lambda d: d.step, default=None)
    return "" if first is None else f" by {first.kind} {first.count}/{first.limit} at step {first.step}"


def _invalid(corpora: list[Corpus], detectors: list[Any]) -> None:
    count = sum(is_invalid(c) for corpus in corpora for run in corpus.runs for c in run.calls)
    if not count:
        print("\nno invalid turns (tools named _...) in these corpora: the table without them is the same")
        return
    dropped = [Corpus(c.name, tuple(without_invalid(c.runs))) for c in corpora]
    print(f"\nthe same with the {count} invalid turns dropped:\n")
    print(format_corpora(score_corpora(detectors, dropped), dropped))
