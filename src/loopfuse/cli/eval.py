"""``loopfuse eval DIR --labels labels.json [--config FILE]...``: score guard
configurations on a labeled corpus and print the comparison table."""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Sequence

from ..errors import ConfigError
from ..evaluation import GuardFactory, format_table, load_corpus, score_many
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
    if args.json:
        print(json.dumps([s.as_dict() for s in scores], indent=2))
    else:
        print(f"{len(corpus)} labeled runs in {args.folder}")
        print(format_table(scores))
        print(tally.summary())
    return 0


def _factories(paths: Sequence[str]) -> list[tuple[str, GuardFactory]]:
    if not paths:
        return [("discovered or defaults", _factory(shadow_guard(None)))]
    return [(os.path.basename(p), _factory(shadow_guard(p))) for p in paths]


def _factory(template: Guard) -> GuardFactory:
    config = template.config
    return lambda: Guard(config)
