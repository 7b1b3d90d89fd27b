"""Detection on the labeled development corpus: each breaker alone, the default, three baselines.

    PYTHONPATH=src python bench/detection_eval.py [CORPUS_DIR]

Every trajectory is replayed call by call, each agent role as its own agent, reporting each
allowed call's result (``output_excerpt``, ``ok``) to the guard as an adapter would. A loop
run is caught when its first denial falls at or after ``loop_start``; any denial in a healthy
run, or before ``loop_start`` in a loop run, is a false positive. "after" is the median of
(first denial step - loop_start) over the caught loops.
"""

from __future__ import annotations

import json
import statistics
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from loopfuse import Guard
from loopfuse.calls import canonical_json
from loopfuse.replay import replay_calls
from loopfuse.transcripts.model import ToolCall
from loopfuse.transcripts.normalized import read_normalized

DEFAULT_CORPUS = Path(__file__).resolve().parents[1] / ".." / "shared" / "corpus" / "dev"
Detector = Callable[[list[ToolCall]], int | None]


@dataclass
class Score:
    caught: int = 0
    loops: int = 0
    healthy_fp: int = 0
    early_fp: int = 0
    delays: dict[str, int] | None = None

    def row(self, name: str) -> str:
        delays = list((self.delays or {}).values())
        after = f"{statistics.median(delays):g}" if delays else "-"
        caught = f"{self.caught}/{self.loops}"
        fp = self.healthy_fp + self.early_fp
        return (
            f"| {name:<44} | {caught:>6} | {after:>5} | {fp:>3} | {self.healthy_fp:>7} | {self.early_fp:>5} |"
        )


HEADER = (
    f"| {'configuration':<44} | {'caught':>6} | {'after':>5} | {'FP':>3} | {'healthy':>7} | {'early':>5} |\n"
    f"|{'-' * 46}|{'-' * 8}|{'-' * 7}|{'-' * 5}|{'-' * 9}|{'-' * 7}|"
)


def load_corpus(root: Path) -> list[tuple[dict[str, Any], list[ToolCall]]]:
    """Each labeled run: its label record and its calls."""
    labels = json.loads((root / "labels.json").read_text(encoding="utf-8"))
    return [(labels[name], list(read_normalized(root / f"{name}.jsonl"))) for name in sorted(labels)]


def first_denials_guard(config: Mapping[str, Any]) -> Callable[[list[ToolCall]], int | None]:
    """The first denial step of a run under a fresh guard built from ``config``."""

    def first(calls: list[ToolCall]) -> int | None:
        reports = replay_calls(calls, Guard.from_config(config))
        steps = [r.first_denial_step for r in reports if r.first_denial_step is not None]
        return min(steps) if steps else None

    return first


def per_agent(detector: Detector) -> Callable[[list[ToolCall]], int | None]:
    """A baseline run on each agent role separately; the run's earliest denial."""

    def first(calls: list[ToolCall]) -> int | None:
        agents: dict[str, list[ToolCall]] = {}
        for call in calls:
            agents.setdefault(call.agent, []).append(call)
        steps = [s for s in (detector(c) for c in agents.values()) if s is not None]
        return min(steps) if steps else None

    return first


def identical_in_a_row(limit: int) -> Detector:
    """Baseline: deny the ``limit``-th identical call in a row."""

    def detect(calls: list[ToolCall]) -> int | None:
        previous, streak = None, 0
        for call in calls:
            key = call.tool + "\n" + canonical_json(call.args)
            streak = streak + 1 if key == previous else 1
            previous = key
            if streak >= limit:
                return call.step
        return None

    return detect


def identical_pairs(limit: int) -> Detector:
    """Baseline: stop once the last ``limit`` (action, observation) pairs are identical;
    the agent's next call is the first one prevented."""

    def detect(calls: list[ToolCall]) -> int | None:
        previous, streak, stopped = None, 0, False
        for call in calls:
            if stopped:
                return call.step
            pair = (call.tool, canonical_json(call.args), call.result, call.ok)
            streak = streak + 1 if pair == previous else 1
            previous = pair
            stopped = streak >= limit
        return None

    return detect


def score(runs: Iterable[tuple[dict[str, Any], list[ToolCall]]], first: Detector) -> Score:
    """Caught loops with their delays by run, healthy runs denied, loop runs denied early."""
    result = Score(delays={})
    assert result.delays is not None
    for label, calls in runs:
        step = first(calls)
        is_loop = label["label"] == "loop"
        result.loops += is_loop
        if step is None:
            continue
        if not is_loop:
            result.healthy_fp += 1
        elif step < label["loop_start"]:
            result.early_fp += 1
        else:
            result.caught += 1
            result.delays[calls[0].run] = step - label["loop_start"]
    return result


def paired(ours: Score, theirs: Score) -> str:
    """Median delay of both on the loops both caught."""
    mine, other = ours.delays or {}, theirs.delays or {}
    common = sorted(set(mine) & set(other))
    if not common:
        return "no loop caught by both"
    a = statistics.median(mine[r] for r in common)
    b = statistics.median(other[r] for r in common)
    return f"on the {len(common)} loops both catch, median after: default {a:g}, baseline {b:g}"


_OFF = {"enabled": False}
_ALONE_BASE = {
    "circuit_breaker": {"enabled": False},
    "cycle": _OFF,
    "near_duplicate": _OFF,
    "same_error": _OFF,
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
    "default: Guard()": {},
}

BASELINES: dict[str, Detector] = {
    "baseline: 5th identical in a row": per_agent(identical_in_a_row(5)),
    "baseline: 4th identical in a row": per_agent(identical_in_a_row(4)),
    "baseline: 4 identical action+result": per_agent(identical_pairs(4)),
}


def main(argv: list[str]) -> int:
    root = Path(argv[1]) if len(argv) > 1 else DEFAULT_CORPUS
    if not (root / "labels.json").is_file():
        print(f"no labeled corpus at {root}")
        return 1
    runs = load_corpus(root)
    healthy = sum(label["label"] == "healthy" for label, _ in runs)
    print(f"{len(runs)} runs ({healthy} healthy) from {root.resolve()}")
    print(HEADER)
    scores = {name: score(runs, first_denials_guard(c)) for name, c in CONFIGURATIONS.items()}
    scores.update({name: score(runs, detector) for name, detector in BASELINES.items()})
    for name, result in scores.items():
        print(result.row(name))
    print()
    ours = scores["default: Guard()"]
    for name in BASELINES:
        print(f"{name}: {paired(ours, scores[name])}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
