"""The default configuration on the labeled development corpus (skipped when it is absent)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from loopfuse import Guard
from loopfuse.replay import replay_calls
from loopfuse.transcripts.normalized import read_normalized

CORPUS = Path(__file__).resolve().parents[2] / ".." / "shared" / "corpus" / "dev"
pytestmark = pytest.mark.skipif(not (CORPUS / "labels.json").is_file(), reason="dev corpus absent")


def _labels() -> dict[str, dict[str, object]]:
    labels: dict[str, dict[str, object]] = json.loads((CORPUS / "labels.json").read_text())
    return labels


def _first_denial(name: str) -> int | None:
    reports = replay_calls(read_normalized(CORPUS / f"{name}.jsonl"), Guard())
    steps = [r.first_denial_step for r in reports if r.first_denial_step is not None]
    return min(steps) if steps else None


def test_default_denies_nothing_in_healthy_runs() -> None:
    healthy = [name for name, label in _labels().items() if label["label"] == "healthy"]
    assert len(healthy) == 25
    assert {name: _first_denial(name) for name in healthy} == dict.fromkeys(healthy)


def test_default_catches_more_loops_than_five_in_a_row() -> None:
    loops = {n: lab for n, lab in _labels().items() if lab["label"] == "loop"}
    caught = 0
    for name, label in loops.items():
        step = _first_denial(name)
        start = label["loop_start"]
        assert isinstance(start, int)
        caught += step is not None and step >= start
    assert caught >= 22
