"""Leave-one-corpus-out: limits picked on the other corpora, scored on the one left out.

Each rule of the grid runs alone at each of its limits once. Before a guard's first denial
every breaker has seen the same allowed calls, so a combination's first denial in a run is
the earliest of its rules' first denials alone; a combination denies a healthy run exactly
when one of its rules does. Selection, per held-out fold, on the training corpora only:
for each rule, the first limit at least ``MARGIN`` times the tightest one that denies no
healthy training run, whether its results are passed whole or cut to their first
``EXCERPT`` characters (a host that keeps excerpts, or tools with terse errors: a limit
that only holds while the errors tell the calls apart does not generalize), the loosest
spared one when none is that high; then
each rule on at that limit or off, whichever set catches the most training loops (fewer
early denials, then more rules on, break ties). The chosen limits are then scored as one real guard on the held-out runs.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ...checks import MAX_WINDOW
from ...guard import Guard
from ._corpora import Corpus, merge
from ._scoring import Labeled, Score, guard_detector, score, truncated, verdict

__all__ = ["GRID", "Fold", "Grid", "config_for", "format_loco", "loco"]

OFF: dict[str, Any] = {"enabled": False}
_NEVER = 10**6
MARGIN = 1.5  # a chosen limit is at least this times the tightest that spares the healthy runs
# The healthy runs must also be spared with each result cut to this many characters (as the
# corpora's own excerpts are).
EXCERPT = 200
GRID: dict[str, tuple[int, ...]] = {
    "circuit_breaker.duplicate_limit": (4, 5, 6, 7, 8, 10),
    "circuit_breaker.same_result_limit": (3, 4, 5, 6, 8),
    "circuit_breaker.progress_limit": (5, 6, 8, 10, 12),
    "same_error.limit": (4, 5, 6, 8, 10),
    "same_error.identical_limit": (3, 4, 5, 6),
    "near_duplicate.limit": (4, 5, 6, 8, 10),
    "cycle.min_repeats": (2, 3, 4, 5),
    "stall.limit": (4, 5, 6, 8, 10),
    "stall.error_limit": (2, 3, 4, 5, 6),
    "stall.tool_error_limit": (2, 3, 4, 5, 6, 8, 12),
    "failures.limit": (4, 6, 8, 10, 12, 15, 20),
}
Limits = Mapping[str, int | None]  # None: the rule is off
Firsts = list[int | None]


def config_for(limits: Limits, *, cap: int = 300) -> dict[str, Any]:
    """A guard configuration with these rule limits (None: off) and the call cap ``cap``."""
    dup = limits.get("circuit_breaker.duplicate_limit")
    # Off: the longest window with a limit as long, which no run of the corpora reaches.
    window = {"duplicate_limit": dup, "result_limit": dup + 1} if dup else {
        "duplicate_limit": MAX_WINDOW, "window": MAX_WINDOW, "result_limit": 0}  # fmt: skip
    circuit = {
        "max_calls_per_agent": cap,
        **window,
        "same_result_limit": limits.get("circuit_breaker.same_result_limit") or 0,
        "progress_limit": limits.get("circuit_breaker.progress_limit") or 0,
    }
    errors = (limits.get("same_error.limit"), limits.get("same_error.identical_limit"))
    near, cycle = limits.get("near_duplicate.limit"), limits.get("cycle.min_repeats")
    failures = limits.get("failures.limit")
    stall = {
        "limit": limits.get("stall.limit") or 0,
        "error_limit": limits.get("stall.error_limit") or 0,
        "tool_error_limit": limits.get("stall.tool_error_limit") or 0,
    }
    return {
        "stall": stall if any(stall.values()) else OFF,
        "circuit_breaker": circuit,
        "same_error": {"limit": errors[0] or _NEVER, "identical_limit": errors[1] or 0}
        if any(errors) else OFF,
        "near_duplicate": {"limit": near} if near else OFF,
        "cycle": {"min_repeats": cycle} if cycle else OFF,
        "failures": {"limit": failures} if failures else OFF,
    }  # fmt: skip


def alone(rule: str, value: int) -> dict[str, Any]:
    """Only ``rule`` at ``value``: every other rule and the call cap off."""
    return config_for({rule: value}, cap=0)


@dataclass(frozen=True)
class Fold:
    """One held-out fold: the limits chosen on the training corpora and the scores."""

    held_out: str
    limits: dict[str, int | None]
    train_caught: int
    train_loops: int
    held: Score


class Grid:
    """Every rule of the grid alone at each limit, replayed once over all runs."""

    def __init__(self, corpora: Sequence[Corpus], grid: Mapping[str, tuple[int, ...]] = GRID) -> None:
        self.runs: list[Labeled] = [run for c in corpora for run in c.runs]
        self.corpus_of = [c.name for c in corpora for _ in c.runs]
        self.grid = dict(grid)
        self.firsts = self._by_limit(self.runs)
        self.excerpt_firsts = self._by_limit(truncated(self.runs, EXCERPT))
        self.cap = self._firsts(config_for({}, cap=300), self.runs)

    def _by_limit(self, runs: Sequence[Labeled]) -> dict[str, dict[int, Firsts]]:
        """Each rule's first denial in each of ``runs``, alone at each of its limits."""
        return {rule: {v: self._firsts(alone(rule, v), runs) for v in vs} for rule, vs in self.grid.items()}

    def _firsts(self, config: Mapping[str, Any], runs: Sequence[Labeled]) -> Firsts:
        detect = guard_detector(lambda: Guard.from_config(config))
        return [detect(run.calls) for run in runs]

    def select(self, train: set[int]) -> dict[str, int | None]:
        """The limits chosen on the runs at indices ``train``."""
        margin = {rule: self._margin(rule, train) for rule in self.grid}
        choices = [(None,) if v is None else (v, None) for v in margin.values()]
        best = max(
            itertools.product(*choices),
            key=lambda combo: self._merit(dict(zip(margin, combo, strict=True)), train),
        )
        return dict(zip(margin, best, strict=True))

    def _margin(self, rule: str, train: set[int]) -> int | None:
        """Half again the tightest limit that spares every healthy training run, with whole
        results and with excerpts (the loosest in the grid when none is that high): a margin
        in proportion, not one grid step."""
        spares = [v for v in self.grid[rule] if self._spares_both(rule, v, train)]
        if not spares:
            return None
        wide = [v for v in spares if v >= MARGIN * spares[0]]
        return wide[0] if wide else spares[-1]

    def _spares_both(self, rule: str, limit: int, train: set[int]) -> bool:
        """Whether ``rule`` at ``limit`` spares the healthy training runs, whole and as excerpts."""
        whole, excerpts = self.firsts[rule][limit], self.excerpt_firsts[rule][limit]
        return self._spares(whole, train) and self._spares(excerpts, train)

    def _spares(self, firsts: Firsts, train: set[int]) -> bool:
        return all(firsts[i] is None or self.runs[i].label == "loop" for i in train)

    def _merit(self, limits: Limits, train: set[int]) -> tuple[int, int, int]:
        caught = early = 0
        for i in train:
            result = verdict(self.runs[i], self.first(limits, i))
            caught += result.caught
            early += result.false_positive and result.label == "loop"
        return caught, -early, sum(v is not None for v in limits.values())

    def first(self, limits: Limits, i: int) -> int | None:
        """Run ``i``'s first denial under ``limits`` (the earliest of the rules alone)."""
        found = [self.firsts[r][v][i] for r, v in limits.items() if v is not None] + [self.cap[i]]
        return min((f for f in found if f is not None), default=None)

    def fold(self, held_out: Sequence[str]) -> Fold:
        """Limits chosen without the corpora ``held_out``, scored (as a real guard) on them."""
        train = {i for i, name in enumerate(self.corpus_of) if name not in held_out}
        limits = self.select(train)
        merit = self._merit(limits, train)
        config = config_for(limits)
        held = [run for run, name in zip(self.runs, self.corpus_of, strict=True) if name in held_out]
        loops = sum(self.runs[i].label == "loop" for i in train)
        name = "+".join(held_out)
        return Fold(name, limits, merit[0], loops, score(name, lambda: Guard.from_config(config), held))


def loco(corpora: Sequence[Corpus], grid: Mapping[str, tuple[int, ...]] = GRID) -> list[Fold]:
    """Each corpus held out in turn, and dev with sweagent held out together when both exist."""
    names = [c.name for c in corpora]
    folds: list[Sequence[str]] = [[n] for n in names]
    if {"dev", "sweagent"} <= set(names):
        folds.append(["dev", "sweagent"])
    searched = Grid(corpora, grid)
    return [searched.fold(f) for f in folds]


_SHORT = {
    "circuit_breaker.duplicate_limit": "dup",
    "circuit_breaker.same_result_limit": "same_res",
    "circuit_breaker.progress_limit": "progress",
    "same_error.limit": "err",
    "same_error.identical_limit": "err_ident",
    "near_duplicate.limit": "near",
    "cycle.min_repeats": "cycle",
}


def describe_limits(limits: Limits) -> str:
    """``dup 7 same_res 4 ...`` (``-`` for a rule that is off)."""
    return " ".join(f"{_SHORT.get(r, r)} {'-' if v is None else v}" for r, v in limits.items())


def format_loco(
    folds: Sequence[Fold],
    defaults: Mapping[str, Score] | None = None,
    label: str = "default Guard()",
    rivals: Mapping[str, Sequence[Score]] | None = None,
) -> str:
    """The leave-one-corpus-out table; ``defaults`` (scores by corpus name) adds, under each
    fold, that configuration's row on the same held-out runs, and ``rivals`` (the anchor
    rules' scores by corpus name) the row of the anchor that catches the most there without
    denying a healthy run."""
    lines = [
        f"{'held out':<20} {'train caught':>12} {'held caught':>11} {'median':>6} "
        f"{'healthy denied':>14} {'early':>5}  limits chosen on the others"
    ]
    for f in folds:
        lines.append(
            _loco_row(f.held_out, f.held, f"{f.train_caught}/{f.train_loops}", describe_limits(f.limits))
        )
        parts = f.held_out.split("+")
        if defaults and all(p in defaults for p in parts):
            lines.append(_loco_row(f"  {label}", merge(label, [defaults[p] for p in parts]), "", ""))
        best = _best_rival(rivals, parts) if rivals else None
        if best is not None:
            lines.append(_loco_row("  best sparing anchor", best, "", best.name))
    return "\n".join([*lines, *_held_out_total(folds, rivals)])


def _held_out_total(folds: Sequence[Fold], rivals: Mapping[str, Sequence[Score]] | None) -> list[str]:
    """Each corpus held out once, summed; and each anchor on all the corpora, for comparison."""
    single = [f for f in folds if "+" not in f.held_out]
    if len(single) < 2:
        return []
    total = merge("held out, in total", [f.held for f in single])
    lines = [_loco_row("each held out, summed", total, "", "")]
    if rivals and all(f.held_out in rivals for f in single):
        for summed in _rivals_over(rivals, [f.held_out for f in single]):
            lines.append(_loco_row("  anchor, all corpora", summed, "", summed.name))
    return lines


def _best_rival(rivals: Mapping[str, Sequence[Score]], parts: Sequence[str]) -> Score | None:
    """Of the anchors scored on every corpus in ``parts``, the one that catches the most
    there while denying no healthy run (None when none spares them all)."""
    if not all(p in rivals for p in parts):
        return None
    sparing = [s for s in _rivals_over(rivals, parts) if s.healthy_denied == 0]
    return max(sparing, key=lambda s: s.caught) if sparing else None


def _rivals_over(rivals: Mapping[str, Sequence[Score]], parts: Sequence[str]) -> list[Score]:
    """Each anchor's score over the corpora ``parts`` together."""
    return [merge(s.name, [rivals[p][i] for p in parts]) for i, s in enumerate(rivals[parts[0]])]


def _loco_row(name: str, s: Score, train: str, limits: str) -> str:
    median = "-" if s.median_calls_after_start is None else f"{s.median_calls_after_start:g}"
    return (
        f"{name:<20} {train:>12} {f'{s.caught}/{s.loops}':>11} {median:>6} "
        f"{f'{s.healthy_denied}/{s.healthy}':>14} {s.early:>5}  {limits}"
    ).rstrip()
