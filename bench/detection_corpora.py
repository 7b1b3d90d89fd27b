"""The multi-corpus report of ``bench/detection_eval.py``: one table per corpus and the total,
what the default misses and denies (with the first denial's breaker), the invalid-turn
variant, and leave-one-corpus-out."""

from __future__ import annotations

import functools
import itertools
import json
from collections.abc import Callable, Mapping
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
from loopfuse.config import DEFAULT_IGNORE_ARGS


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
    _perturbed(corpora)
    return 0


EXCERPTS = (None, 1000, 500, 200, 100)
IGNORING_ID = {"circuit_breaker": {"ignore_args": [*DEFAULT_IGNORE_ARGS, "request_id"]}}


def _perturbed(corpora: list[Corpus]) -> None:
    """The default on the corpora as other hosts would pass them: each result cut to its first
    N characters (a host that keeps excerpts, or tools with terse errors), no ok=, ok=True for
    every result not an error (as the adapters report a tool that returned), no result at
    all (a host that only checks), a fresh id argument in every call (and that argument
    ignored). Caught, healthy denied, early."""
    print("\nthe default on the corpora as other hosts would pass them: caught, healthy denied, early")
    print(f"{'':>7}  " + "  ".join(f"{c.name:>24}" for c in corpora))
    rows: list[tuple[str, Callable[[Corpus], Corpus], Mapping[str, Any]]]
    rows = [(str(n or "whole"), functools.partial(_cut, chars=n), {}) for n in EXCERPTS]
    rows += [("no ok", _without_ok, {}), ("ok true", _ok_unless_failed, {})]
    rows += [("no res", _without_results, {}), ("took", _with_duration, {})]
    rows += [("id", _with_fresh_id, {}), ("id ign", _with_fresh_id, IGNORING_ID)]
    for label, change, config in rows:
        table = score_corpora([("default", guard_detector(_factory(config)))], [change(c) for c in corpora])
        print(f"{label:>7}  " + "  ".join(_cell(table[c.name][0]) for c in corpora))
    print("(N: each result cut to its first N characters; no ok: no result marked as an error;")
    print(" ok true: every result not marked an error marked a success, as the adapters report;")
    print(" no res: no result reported at all, as a host that only calls check;")
    print(" took: each result ends with how long it took, '(took 0.42s)';")
    print(" id: a fresh request_id argument in every call; id ign: the same, with it in ignore_args)")


def _cell(s: Score) -> str:
    return f"{f'{s.caught}/{s.loops}':>7} {f'{s.healthy_denied}/{s.healthy}':>7} {s.early:>8}".rjust(24)


def _cut(corpus: Corpus, chars: int | None) -> Corpus:
    return corpus if chars is None else Corpus(corpus.name, tuple(truncated(corpus.runs, chars)))


def _with_duration(corpus: Corpus) -> Corpus:
    took = (f"\n(took {n * 37 % 100 / 100:.2f}s)" for n in itertools.count())
    return _each_call(corpus, lambda c: replace(c, result=f"{c.result or ''}{next(took)}"))


def _with_fresh_id(corpus: Corpus) -> Corpus:
    ids = (f"{n:08x}-7a1e-4c2b-9d3f-{n * 7919:012x}" for n in itertools.count())
    return _each_call(corpus, lambda c: _plus_id(c, next(ids)))


def _plus_id(call: Any, fresh: str) -> Any:
    return replace(call, args={**call.args, "request_id": fresh}) if isinstance(call.args, dict) else call


def _without_ok(corpus: Corpus) -> Corpus:
    return _each_call(corpus, lambda c: replace(c, ok=None))


def _ok_unless_failed(corpus: Corpus) -> Corpus:
    return _each_call(corpus, lambda c: replace(c, ok=c.ok is not False))


def _without_results(corpus: Corpus) -> Corpus:
    return _each_call(corpus, lambda c: replace(c, result=None, ok=None))


def _each_call(corpus: Corpus, change: Callable[[Any], Any]) -> Corpus:
    """``corpus`` with ``change`` applied to every call of every run, in order."""
    runs = (replace(run, calls=tuple(change(c) for c in run.calls)) for run in corpus.runs)
    return Corpus(corpus.name, tuple(runs))


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
