"""Argument values never appear in a denial text, error, log line or incident line."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from loopfuse import Guard, LoopBrake, LoopBrakeError

CANARY = "CANARY-7f3a-secret"


def test_no_argument_value_escapes(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    log = tmp_path / "incidents.jsonl"
    guard = Guard.from_config(
        {
            "circuit_breaker": {"duplicate_limit": 1, "max_calls_per_agent": 3, "incident_log": str(log)},
            "loop_brake": {"max_repeats": 1},
            "guard": {"abort_after_denials": 2},
        }
    )
    texts: list[str] = []
    with caplog.at_level(logging.DEBUG, logger="loopfuse"):
        for i in range(6):
            decision = guard.check("search", {"query": CANARY, "n": i % 2}, "agent")
            texts.append(repr(decision))
        brake = LoopBrake(1)
        brake.check("search", {"query": CANARY})
        with pytest.raises(LoopBrakeError) as info:
            brake.check("search", {"query": CANARY})
    texts += [str(info.value), repr(vars(info.value)), log.read_text(), caplog.text, repr(guard.stats())]
    assert any("refused" in t for t in texts)
    assert all(CANARY not in t for t in texts)
