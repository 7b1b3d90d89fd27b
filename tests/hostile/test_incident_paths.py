"""Incident log paths: refused at construction when they could never work; a path that breaks
later never blocks or breaks a check (one warning, counted as fail-open)."""

from __future__ import annotations

import logging
import os
import threading
from pathlib import Path

import pytest

from loopfuse import ConfigError, Guard


def guard_logging_to(path: str) -> Guard:
    return Guard.from_config({"circuit_breaker": {"duplicate_limit": 1, "incident_log": path}})


@pytest.mark.parametrize(
    ("make", "why"),
    [
        (lambda d: str(d / "a\0b.jsonl"), "NUL"),
        (lambda d: str(d / "missing" / "i.jsonl"), "not a directory"),
        (lambda d: str(d), "not a regular file"),
        (lambda d: "/dev/null", "not a regular file"),
    ],
)
def test_a_path_that_cannot_work_is_refused_at_construction(tmp_path: Path, make: object, why: str) -> None:
    path = make(tmp_path)  # type: ignore[operator]
    with pytest.raises(
        ConfigError, match=r"\[circuit_breaker\] incident_log = .* expected a regular file"
    ) as info:
        guard_logging_to(path)
    assert why in str(info.value)


def test_a_fifo_is_refused_at_construction(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(ConfigError, match="not a regular file"):
        guard_logging_to(str(fifo))


def test_a_fifo_that_replaces_the_file_never_blocks_a_check(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    log = tmp_path / "i.jsonl"
    guard = guard_logging_to(str(log))
    os.mkfifo(log)  # no file at construction; a FIFO (without a reader) by the first denial
    results: list[bool] = []
    worker = threading.Thread(target=lambda: results.extend(guard.check("f", {}, a).allowed for a in "aabb"))
    with caplog.at_level(logging.WARNING, logger="loopfuse"):
        worker.start()
        worker.join(timeout=10)
    assert not worker.is_alive(), "check blocked on the FIFO"
    assert results == [True, False, True, False]
    assert guard.stats()["fail_open"] == {"incident_log": 2}
    assert sum("incident log" in r.getMessage() for r in caplog.records) == 1


def test_a_fifo_with_a_reader_is_refused_too(tmp_path: Path) -> None:
    log = tmp_path / "i.jsonl"
    guard = guard_logging_to(str(log))
    os.mkfifo(log)
    reader = os.open(log, os.O_RDONLY | os.O_NONBLOCK)
    try:
        assert [guard.check("f", {}, "a").allowed for _ in range(2)] == [True, False]
        assert os.read(reader, 100) == b""  # nothing written to it
    finally:
        os.close(reader)
    assert guard.stats()["fail_open"] == {"incident_log": 1}


def test_a_regular_file_and_a_new_file_are_accepted(tmp_path: Path) -> None:
    existing = tmp_path / "old.jsonl"
    existing.write_text("")
    for path in (existing, tmp_path / "new.jsonl"):
        guard = guard_logging_to(str(path))
        assert [guard.check("f", {}, "a").allowed for _ in range(2)] == [True, False]
        assert path.read_text().count("\n") == 1
