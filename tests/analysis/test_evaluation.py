"""Scoring configurations on a labeled corpus."""

from __future__ import annotations

import json
from pathlib import Path

from loopfuse.evaluation import (
    Labeled,
    compare,
    format_table,
    identical_in_a_row,
    identical_pairs,
    load_corpus,
    score,
    score_detector,
    score_many,
)
from loopfuse.guard import Guard
from loopfuse.transcripts.model import ToolCall


def _write_run(folder: Path, name: str, tools: list[str]) -> None:
    rows = [{"meta": {"id": name}}] + [
        {"step": i, "tool": t, "args": {"command": t}, "agent": "coder"} for i, t in enumerate(tools)
    ]
    (folder / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))


def test_caught_delay_and_false_positives(tmp_path: Path) -> None:
    _write_run(tmp_path, "looping", ["a", "b", "c"] + ["x"] * 10)
    _write_run(tmp_path, "healthy-rerun", ["t", "e1", "t", "e2", "t", "e3", "t"])
    labels = {"looping": {"label": "loop", "loop_start": 3}, "healthy-rerun": {"label": "healthy"}}
    (tmp_path / "labels.json").write_text(json.dumps(labels))
    corpus = load_corpus(tmp_path, tmp_path / "labels.json")

    def strict() -> Guard:
        return Guard.from_config({"circuit_breaker": {"duplicate_limit": 3}})

    def brake() -> Guard:
        return Guard.from_config({"circuit_breaker": {"enabled": False}, "loop_brake": {"max_repeats": 2}})

    scores = score_many([("window 3", strict), ("brake 2", brake)], corpus)
    window, repeat = scores
    assert (window.caught, window.loops, window.false_positives) == (1, 1, 1)  # re-running t 4 times
    assert window.median_calls_after_start == 3
    assert (repeat.caught, repeat.false_positives, repeat.median_calls_after_start) == (1, 0, 2)
    table = format_table(scores)
    assert "window 3" in table and "1/1" in table and "1/2" in table


def test_defaults_on_the_dev_corpus(corpus: Path) -> None:
    items = load_corpus(corpus, corpus / "labels.json")
    assert len(items) == 49 and sum(i.label == "loop" for i in items) == 24
    (score,) = score_many([("defaults", Guard)], items)
    assert score.loops == 24 and score.healthy == 25
    assert 0 < score.caught <= 24 and score.median_calls_after_start is not None


def _calls(rows: list[tuple[str, str, str]]) -> tuple[ToolCall, ...]:
    """(agent, command, output) rows as recorded calls, one step each."""
    return tuple(
        ToolCall(run="r", agent=a, step=i, tool=cmd.split()[0], args={"command": cmd}, result=out)
        for i, (a, cmd, out) in enumerate(rows)
    )


def test_in_a_row_baseline_counts_each_agent_on_its_own() -> None:
    rows = [("a", "ls", "x"), ("b", "ls", "x"), ("a", "ls", "x"), ("b", "pwd", "y"), ("a", "ls", "x")]
    assert identical_in_a_row(3)(_calls(rows)) == 4
    assert identical_in_a_row(4)(_calls(rows)) is None


def test_pairs_baseline_stops_the_call_after_the_identical_pairs() -> None:
    new_output = [("a", "scroll", str(i)) for i in range(6)]
    assert identical_pairs(2)(_calls(new_output)) is None
    same_output = [("a", "goto 1", "s"), ("a", "goto 1", "s"), ("b", "ls", ""), ("a", "open f", "t")]
    assert identical_pairs(2)(_calls(same_output)) == 3


def test_compare_counts_earlier_tied_and_later_on_common_loops() -> None:
    def labeled(name: str, n: int) -> Labeled:
        return Labeled(name, _calls([("a", "x", "same")] * n), "loop", 0)

    corpus = [labeled("short", 5), labeled("long", 9)]
    brake = score("brake 2", lambda: Guard.from_config({"loop_brake": {"max_repeats": 2}}), corpus)
    baseline = score_detector("5 in a row", identical_in_a_row(5), corpus)
    comparison = compare(brake, baseline)
    assert (comparison.common, comparison.earlier, comparison.tied, comparison.later) == (2, 2, 0, 0)
    assert (comparison.ours, comparison.theirs) == (2, 4)
    assert "on the 2 loops both catch" in comparison.describe()
    assert compare(brake, score_detector("never", lambda calls: None, corpus)).common == 0
