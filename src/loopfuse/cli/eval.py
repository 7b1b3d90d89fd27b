"""``loopfuse eval DIR [--labels labels.json] [--config FILE]... [--baselines] [--loco]``:
score guard configurations (and the anchor rules) on labeled corpora and print the tables.

With ``--labels``, DIR is one corpus and one comparison table is printed. Without it, DIR
is a corpus folder (with ``labels.json``) or a folder of them: one table per corpus, then
the total; ``--loco`` adds the leave-one-corpus-out table."""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Sequence

from ..analysis.evaluation import (
    Corpus,
    Fold,
    GuardFactory,
    Score,
    anchors,
    baselines,
    compare,
    format_corpora,
    format_loco,
    format_table,
    guard_detector,
    is_invalid,
    load_corpora,
    load_corpus,
    loco,
    score_corpora,
    score_detector,
    score_many,
    without_invalid,
)
from ..analysis.transcripts.base import ReadTally
from ..errors import ConfigError
from ..guard import Guard
from .common import shadow_guard, usage_error

__all__ = ["register", "run"]


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("eval", help="score guard configurations on labeled corpora")
    parser.add_argument(
        "folder", metavar="DIR", help="a corpus (one recorded run per file), or a folder of corpora"
    )
    one_or_many = parser.add_mutually_exclusive_group()
    one_or_many.add_argument("--labels", help="labels.json: score DIR as one corpus with these labels")
    parser.add_argument(
        "--config", action="append", default=[], help="a guard configuration; repeat to compare several"
    )
    parser.add_argument(
        "--baselines",
        action="store_true",
        help="with --labels: add the three baselines and compare the first configuration with each",
    )
    one_or_many.add_argument(
        "--loco", action="store_true", help="also print the leave-one-corpus-out table (without --labels)"
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of tables")
    parser.set_defaults(run=run, eval_parser=parser)


def run(args: argparse.Namespace) -> int:
    if args.baselines and args.labels is None:
        args.eval_parser.error(
            "argument --baselines: only with --labels (the baselines are compared on one labeled corpus)"
        )
    if not os.path.isdir(args.folder):
        return usage_error(f"not a folder: {args.folder}")
    try:
        factories = _factories(args.config)
    except ConfigError as exc:
        return usage_error(str(exc))
    if args.labels is None:
        return _run_corpora(args, factories)
    tally = ReadTally()
    try:
        corpus = load_corpus(args.folder, args.labels, tally)
    except (OSError, ValueError) as exc:
        return usage_error(_unusable(exc, args.labels))
    scores = score_many(factories, corpus)
    others = [score_detector(name, d, corpus) for name, d in baselines()] if args.baselines else []
    if args.json:
        print(json.dumps([s.as_dict() for s in scores + others], indent=2))
    else:
        print(f"{len(corpus)} labeled runs in {args.folder}")
        print(format_table(scores + others))
        _print_comparisons(scores[0], others)
        print(tally.summary())
    return 0


def _run_corpora(args: argparse.Namespace, factories: list[tuple[str, GuardFactory]]) -> int:
    tally = ReadTally()
    try:
        corpora = load_corpora(args.folder, tally)
    except (OSError, ValueError) as exc:
        return usage_error(_unusable(exc, args.folder))
    if not corpora:
        return usage_error(f"no labels.json in {args.folder} or in its subfolders")
    detectors = [(name, guard_detector(f)) for name, f in factories] + anchors()
    table = score_corpora(detectors, corpora)
    dropped = _without_invalid(corpora)
    table_dropped = score_corpora(detectors, dropped) if dropped else None
    folds = loco(corpora) if args.loco else []
    if args.json:
        print(json.dumps(_as_json(table, table_dropped, folds), indent=2))
        return 0
    print(format_corpora(table, corpora))
    _print_dropped(table_dropped, dropped)
    if args.loco:
        print("\nleave-one-corpus-out (limits chosen on the other corpora, scored on the one held out)")
        rivals = {name: scores[len(factories) :] for name, scores in table.items()}
        defaults = {name: scores[0] for name, scores in table.items()}
        print(format_loco(folds, defaults, factories[0][0], rivals))
    print(tally.summary())
    return 0


def _unusable(exc: OSError | ValueError, path: str) -> str:
    """The message for labels or runs that cannot be read (the ValueError names the file)."""
    if isinstance(exc, OSError):
        return f"cannot read {exc.filename or path}: {exc.strerror or exc}"
    return f"invalid labels: {exc}"


def _without_invalid(corpora: Sequence[Corpus]) -> list[Corpus]:
    """The corpora with invalid turns dropped, or [] when they have none."""
    if not any(is_invalid(c) for corpus in corpora for run in corpus.runs for c in run.calls):
        return []
    return [Corpus(c.name, tuple(without_invalid(c.runs))) for c in corpora]


def _print_dropped(table: dict[str, list[Score]] | None, corpora: Sequence[Corpus]) -> None:
    if table is None:
        print("\nno invalid turns (tools named _...) in these corpora: nothing to drop")
        return
    print("\nthe same with invalid turns (tools named _...) dropped:\n")
    print(format_corpora(table, corpora))


def _as_json(
    table: dict[str, list[Score]], dropped: dict[str, list[Score]] | None, folds: Sequence[Fold]
) -> dict[str, object]:
    out: dict[str, object] = {name: [s.as_dict() for s in scores] for name, scores in table.items()}
    if dropped is not None:
        out["invalid_dropped"] = {name: [s.as_dict() for s in scores] for name, scores in dropped.items()}
    if folds:
        out["loco"] = [_fold_dict(f) for f in folds]
    return out


def _fold_dict(fold: Fold) -> dict[str, object]:
    return {"held_out": fold.held_out, "limits": fold.limits, **fold.held.as_dict()}


def _print_comparisons(ours: Score, others: Sequence[Score]) -> None:
    for other in others:
        print(f"{ours.name} against {other.name}: {compare(ours, other).describe()}")


def _factories(paths: Sequence[str]) -> list[tuple[str, GuardFactory]]:
    if not paths:
        return [("discovered or defaults", _factory(shadow_guard(None)))]
    return [(os.path.basename(p), _factory(shadow_guard(p))) for p in paths]


def _factory(template: Guard) -> GuardFactory:
    config = template.config
    return lambda: Guard(config)
