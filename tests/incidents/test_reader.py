"""The incremental incident reader: appends, partial lines, truncation and rotation."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from typing import TypeVar

from loopfuse.incident_reader import IncidentReader

from .conftest import append, incident_line

T = TypeVar("T")


def agents(records: list[dict[str, object]]) -> list[object]:
    return [r.get("agent") for r in records]


def test_each_read_returns_only_what_was_appended_since(log: Path) -> None:
    append(log, incident_line("a") + incident_line("b"))
    with IncidentReader(log) as reader:
        assert agents(reader.read()) == ["a", "b"]
        assert reader.read() == []
        append(log, incident_line("c"))
        assert agents(reader.read()) == ["c"]
        append(log, incident_line("d") + incident_line("e"))
        assert agents(reader.read()) == ["d", "e"]


def test_partial_last_line_is_kept_until_completed(log: Path) -> None:
    line = incident_line("a")
    with IncidentReader(log) as reader:
        append(log, line[:17])
        assert reader.read() == []
        append(log, line[17:-1])
        assert reader.read() == []
        append(log, "\n" + incident_line("b")[:5])
        assert agents(reader.read()) == ["a"]
        append(log, incident_line("b")[5:])
        assert agents(reader.read()) == ["b"]
        assert reader.skipped == 0


def test_truncated_file_is_read_again_from_its_start(log: Path) -> None:
    append(log, incident_line("a") + incident_line("b"))
    with IncidentReader(log) as reader:
        assert agents(reader.read()) == ["a", "b"]
        with open(log, "r+b") as fh:
            fh.truncate(0)
        append(log, incident_line("c"))
        assert agents(reader.read()) == ["c"]


def test_rotated_file_is_finished_then_the_new_one_read(log: Path) -> None:
    append(log, incident_line("a"))
    with IncidentReader(log) as reader:
        assert agents(reader.read()) == ["a"]
        append(log, incident_line("b"))  # written just before rotation
        os.rename(log, log.with_suffix(".1"))
        assert agents(reader.read()) == ["b"]  # the new file does not exist yet
        append(log.with_suffix(".1"), incident_line("late"))
        append(log, incident_line("c"))
        assert agents(reader.read()) == ["late", "c"]
        append(log, incident_line("d"))
        assert agents(reader.read()) == ["d"]


def test_deleted_and_recreated_file_is_read_from_its_start(log: Path) -> None:
    append(log, incident_line("a"))
    with IncidentReader(log) as reader:
        reader.read()
        log.unlink()
        append(log, incident_line("b") + incident_line("c"))
        assert agents(reader.read()) == ["b", "c"]


def test_missing_file_is_read_once_it_appears(log: Path) -> None:
    with IncidentReader(log, from_start=False) as reader:
        assert reader.read() == []
        append(log, incident_line("a"))
        assert agents(reader.read()) == ["a"]


def test_from_start_false_skips_existing_lines(log: Path) -> None:
    append(log, incident_line("old"))
    with IncidentReader(log, from_start=False) as reader:
        assert reader.read() == []
        append(log, incident_line("new"))
        assert agents(reader.read()) == ["new"]


def test_malformed_lines_are_skipped_and_counted(log: Path) -> None:
    append(log, "not json\n[1, 2]\n\n" + incident_line("a"))
    with IncidentReader(log) as reader:
        assert agents(reader.read()) == ["a"]
        assert reader.skipped == 2


def test_large_backlog_is_read_in_bounded_steps_without_loss(log: Path) -> None:
    lines = [incident_line(f"agent-{i:05d}") for i in range(20_000)]  # about 2.4 MB
    append(log, "".join(lines))
    with IncidentReader(log) as reader:
        seen: list[object] = []
        for _ in range(10):
            batch = reader.read()
            if not batch:
                break
            seen += agents(batch)
        assert seen == [f"agent-{i:05d}" for i in range(20_000)]


def test_read_batches_reads_a_large_backlog_to_its_end_in_bounded_batches(log: Path) -> None:
    append(log, "".join(incident_line(f"agent-{i:05d}") for i in range(20_000)))  # about 2.4 MB
    with IncidentReader(log) as reader:
        batches = list(reader.read_batches())
        assert len(batches) > 1  # each batch at most a few MiB
        assert [a for batch in batches for a in agents(batch)] == [f"agent-{i:05d}" for i in range(20_000)]
        assert list(reader.read_batches()) == []
        append(log, incident_line("later"))
        assert [agents(b) for b in reader.read_batches()] == [["later"]]


def test_a_path_that_cannot_be_opened_reads_empty_and_error_says_why(log: Path) -> None:
    with IncidentReader(log) as reader:
        assert (reader.read(), reader.error) == ([], None)  # not created yet: no error
        log.mkdir()
        assert reader.read() == []
        assert isinstance(reader.error, IsADirectoryError)
        log.rmdir()
        append(log, incident_line("a"))
        assert agents(reader.read()) == ["a"] and reader.error is None


def test_truncated_and_regrown_to_the_same_length_before_the_next_read_is_read_again(log: Path) -> None:
    append(log, incident_line("a"))
    with IncidentReader(log) as reader:
        assert agents(reader.read()) == ["a"]
        with open(log, "r+b") as fh:  # copytruncate rotation
            fh.truncate(0)
        append(log, incident_line("b"))  # same length: the file is as long as the offset again
        assert agents(reader.read()) == ["b"]
        append(log, incident_line("c"))
        assert agents(reader.read()) == ["c"]


def test_truncated_and_regrown_past_the_offset_is_read_from_its_start(log: Path) -> None:
    append(log, incident_line("old"))
    with IncidentReader(log, from_start=False) as reader:
        with open(log, "r+b") as fh:  # before the first read: the offset is where it opened
            fh.truncate(0)
        append(log, incident_line("a") + incident_line("b"))
        assert agents(reader.read()) == ["a", "b"]
        append(log, incident_line("c")[:9])  # a partial line, dropped with the rest
        assert reader.read() == []
        with open(log, "r+b") as fh:
            fh.truncate(0)
        append(log, "".join(incident_line(f"new-{i}") for i in range(5)))
        assert agents(reader.read()) == [f"new-{i}" for i in range(5)]
        assert reader.skipped == 0


def test_an_unchanged_file_is_not_read_again(log: Path) -> None:
    append(log, "".join(incident_line(f"a{i}") for i in range(100)))  # longer than the bytes compared
    with IncidentReader(log) as reader:
        assert len(reader.read()) == 100
        append(log, incident_line("b"))
        assert agents(reader.read()) == ["b"]
        assert reader.read() == []


def test_a_fifo_is_never_opened_and_reads_empty_with_an_error(log: Path) -> None:
    os.mkfifo(log)  # opening a FIFO for reading blocks until a writer opens it
    done = run_in_thread(lambda: IncidentReader(log))
    with done.result(timeout=5) as reader:
        assert reader.read() == []
        assert isinstance(reader.error, OSError) and "not a regular file" in str(reader.error)


def test_a_log_rotated_into_a_fifo_reads_empty_then_the_next_file(log: Path) -> None:
    append(log, incident_line("a"))
    with IncidentReader(log) as reader:
        assert agents(reader.read()) == ["a"]
        os.rename(log, log.with_suffix(".1"))
        os.mkfifo(log)
        assert run_in_thread(reader.read).result(timeout=5) == []
        assert reader.error is not None and "not a regular file" in str(reader.error)
        log.unlink()
        append(log, incident_line("b"))
        assert agents(reader.read()) == ["b"] and reader.error is None


def run_in_thread(call: Callable[[], T]) -> Future[T]:
    """``call`` on a daemon thread: a call that blocks fails the test at ``result(timeout)``."""
    future: Future[T] = Future()

    def target() -> None:
        try:
            future.set_result(call())
        except Exception as exc:  # reported through the future
            future.set_exception(exc)

    threading.Thread(target=target, daemon=True).start()
    return future
