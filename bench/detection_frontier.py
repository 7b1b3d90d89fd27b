"""Can any setting of the breakers' limits beat a baseline on the dev corpus?

    PYTHONPATH=src python bench/detection_frontier.py [CORPUS_DIR]

Before a guard's first denial every breaker has seen the same allowed calls, so the
guard's first denial in a run is the earliest of its breakers' first denials when each
runs alone. This script replays each rule alone at each limit once, then combines them by
that minimum over every combination of limits (a few hundred thousand configurations),
and counts, per baseline, the configurations that catch more loops than it and are
sooner: a lower median of calls after ``loop_start`` both over their own caught loops and
on the loops both catch. It prints the best of them by healthy runs denied.
"""

from __future__ import annotations

import itertools
import statistics
import sys
from collections.abc import Mapping
from typing import Any, cast

from detection_eval import corpus_from

from loopfuse import Guard
from loopfuse.analysis.evaluation import Labeled, baselines, guard_detector, verdict
from loopfuse.checks import MAX_WINDOW

OFF = {"enabled": False}
Firsts = list[int | None]
Summary = tuple[int, int, int, dict[str, int]]


def window_rule(**limits: int) -> dict[str, Any]:
    """Only the window breaker, with only the rules named in ``limits`` active."""
    rules = {"result_limit": 0, "same_result_limit": 0, "progress_limit": 0}
    body = {"max_calls_per_agent": 0, "duplicate_limit": MAX_WINDOW, "window": MAX_WINDOW, **rules, **limits}
    return {"circuit_breaker": body, "cycle": OFF, "near_duplicate": OFF, "same_error": OFF}


def alone(section: str, **body: int) -> dict[str, Any]:
    config: dict[str, Any] = {"circuit_breaker": OFF, "cycle": OFF, "near_duplicate": OFF, "same_error": OFF}
    config[section] = dict(body)
    return config


RULES: dict[str, dict[int, Mapping[str, Any] | None]] = {
    "result_limit": {v: window_rule(result_limit=v, duplicate_limit=v - 1, window=200) for v in range(3, 9)},
    "same_result_limit": {v: window_rule(same_result_limit=v) for v in range(2, 7)},
    "progress_limit": {v: window_rule(progress_limit=v) for v in range(3, 9)},
    "same_error.limit": {v: alone("same_error", limit=v, identical_limit=0) for v in (3, 4, 5, 6, 7, 8, 10)},
    "same_error.identical_limit": {
        v: alone("same_error", limit=10**6, identical_limit=v) for v in range(2, 6)
    },
    "near_duplicate.limit": {v: alone("near_duplicate", limit=v) for v in (3, 4, 5, 6, 8)},
    "cycle.min_repeats": {v: alone("cycle", min_repeats=v) for v in (2, 3, 4)},
}

DEFAULT_LIMITS = {
    "result_limit": 7,
    "same_result_limit": 5,
    "progress_limit": 8,
    "same_error.limit": 10,
    "same_error.identical_limit": 4,
    "near_duplicate.limit": 8,
    "cycle.min_repeats": 3,
}


def first_denials(corpus: list[Labeled], config: Mapping[str, Any] | None) -> Firsts:
    if config is None:
        return [None] * len(corpus)
    detect = guard_detector(lambda: Guard.from_config(config))
    return [detect(item.calls) for item in corpus]


def summarize(corpus: list[Labeled], firsts: Firsts) -> Summary:
    results = [verdict(item, first) for item, first in zip(corpus, firsts, strict=True)]
    caught = sum(r.caught for r in results)
    healthy = sum(r.false_positive for r in results if r.label != "loop")
    early = sum(r.false_positive for r in results if r.label == "loop")
    delays = {r.name: r.calls_after_start for r in results if r.calls_after_start is not None}
    return caught, healthy, early, delays


def beats(ours: Summary, theirs: Summary) -> bool:
    if ours[0] <= theirs[0] or not ours[3]:
        return False
    mine, other = ours[3], theirs[3]
    common = set(mine) & set(other)
    paired = bool(common) and statistics.median(mine[r] for r in common) < statistics.median(
        other[r] for r in common
    )
    return paired and statistics.median(mine.values()) < statistics.median(other.values())


def earliest(columns: tuple[Firsts, ...]) -> Firsts:
    return [min((f for f in firsts if f is not None), default=None) for firsts in zip(*columns, strict=True)]


def main(argv: list[str]) -> int:
    found = corpus_from(argv)
    if found is None:
        return 1
    corpus = found[1]
    per_rule = {name: {0: cast(Firsts, [None] * len(corpus))}
                      | {v: first_denials(corpus, c) for v, c in values.items()}
                for name, values in RULES.items()}  # fmt: skip
    default = earliest(tuple(per_rule[n][v] for n, v in DEFAULT_LIMITS.items()))
    print("the combination by minimum reproduces Guard() on every run:", default == first_denials(corpus, {}))
    targets = {name: summarize(corpus, [d(i.calls) for i in corpus]) for name, d in baselines()}
    winners: dict[str, list[tuple[int, int, int, tuple[int, ...]]]] = {name: [] for name in targets}
    combos = list(itertools.product(*[sorted(v.items()) for v in per_rule.values()]))
    most_caught_clean = 0
    for combo in combos:
        ours = summarize(corpus, earliest(tuple(firsts for _, firsts in combo)))
        if ours[1] == 0:
            most_caught_clean = max(most_caught_clean, ours[0])
        for name, theirs in targets.items():
            if beats(ours, theirs):
                winners[name].append((ours[1], ours[2], -ours[0], tuple(v for v, _ in combo)))
    print(f"{len(combos):,} configurations (0 = rule off) over: {', '.join(per_rule)}")
    default_caught = summarize(corpus, default)[0]
    print(f"most loops caught with no healthy run denied: {most_caught_clean} (Guard(): {default_caught})")
    for name, wins in winners.items():
        best = min(wins, default=None)
        detail = (
            "none"
            if best is None
            else f"best: {best[0]} healthy denied, {best[1]} early, {-best[2]} caught, limits {best[3]}"
        )
        print(f"more caught and sooner than {name}: {len(wins):,} configurations; {detail}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
