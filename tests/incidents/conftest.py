"""Fixtures for the supervision tests: a fake clock and an incident-log writer."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from loopfuse.testing import FakeClock


def incident_line(agent: str, kind: str = "duplicate", tool: str = "web_search", **extra: Any) -> str:
    record = {"time": "2026-09-01T23:10:07Z", "kind": kind, "tool": tool, "count": 6, "limit": 6}
    record["agent"] = agent
    record.update(extra)
    return json.dumps(record) + "\n"


def append(path: Path, text: str) -> None:
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(text)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def log(tmp_path: Path) -> Path:
    return tmp_path / "incidents.jsonl"
