"""Scoring configurations on a labeled corpus."""

from __future__ import annotations

import json
from pathlib import Path

from loopfuse.evaluation import format_table, load_corpus, score_many
from loopfuse.guard import Guard


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
