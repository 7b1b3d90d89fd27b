"""The default configuration on the labeled development corpus (skipped when it is absent)."""

from __future__ import annotations

import functools
import json
from pathlib import Path

import pytest

from loopfuse import Guard
from loopfuse.evaluation import Labeled, guard_detector, load_corpus

CORPUS = Path(__file__).resolve().parents[2] / ".." / "shared" / "corpus" / "dev"
pytestmark = pytest.mark.skipif(not (CORPUS / "labels.json").is_file(), reason="dev corpus absent")


def _labels() -> dict[str, dict[str, object]]:
    labels: dict[str, dict[str, object]] = json.loads((CORPUS / "labels.json").read_text())
    return labels


def _first_denial(name: str) -> int | None:
    """The step of the default guard's first denial, each call's whole output reported as
    its result (as ``loopfuse eval`` scores it)."""
    return guard_detector(Guard)(_runs()[name].calls)


@functools.cache
def _runs() -> dict[str, Labeled]:
    return {run.name: run for run in load_corpus(CORPUS, CORPUS / "labels.json")}


def test_default_denies_nothing_in_healthy_runs() -> None:
    healthy = [name for name, label in _labels().items() if label["label"] == "healthy"]
    assert len(healthy) == 25
    assert {name: _first_denial(name) for name in healthy} == dict.fromkeys(healthy)


def test_default_catches_at_least_20_loops() -> None:
    """The figure docs/evaluation.md gives (5-in-a-row catches 21, denying 5 healthy runs)."""
    loops = {n: lab for n, lab in _labels().items() if lab["label"] == "loop"}
    caught = 0
    for name, label in loops.items():
        step = _first_denial(name)
        start = label["loop_start"]
        assert isinstance(start, int)
        caught += step is not None and step >= start
    assert caught >= 20
