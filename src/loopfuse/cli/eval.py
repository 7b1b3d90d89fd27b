"""``loopfuse eval DIR --labels labels.json [--config FILE]... [--baselines]``: score
guard configurations (and the published baselines) on a labeled corpus and print the
comparison table."""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Sequence

from ..errors import ConfigError
from ..evaluation import (
    GuardFactory,
    Score,
    baselines,
    compare,
    format_table,
    load_corpus,
    score_detector,
    score_many,
)
from ..guard import Guard
from ..transcripts.base import ReadTally
from .common import shadow_guard, usage_error


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("eval", help="score guard configurations on a labeled corpus")
    parser.add_argument("folder", metavar="DIR", help="the corpus: one recorded run per file")
    parser.add_argument("--labels", required=True, help="labels.json (label and loop_start per run)")
    parser.add_argument(
        "--config", action="append", default=[], help="a guard configuration; repeat to compare several"
    )
    parser.add_argument(
        "--baselines",
        action="store_true",
        help="add the three baselines and compare the first configuration with each",
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if not os.path.isdir(args.folder):
        return usage_error(f"not a folder: {args.folder}")
    try:
        factories = _factories(args.config)
        tally = ReadTally()
        corpus = load_corpus(args.folder, args.labels, tally)
    except ConfigError as exc:
        return usage_error(str(exc))
    except (OSError, ValueError) as exc:
        return usage_error(f"cannot read the labels {args.labels}: {exc}")
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
