"""A reader that fails on one file's content costs that file only: counted in a folder,
a usage error naming it when named. No reader fails on the damage we know of (the CLI
tests in tests/cli/test_scan_bad_input.py check that on real files), so a reader that
raises stands in here for the one we do not know of yet."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from loopfuse.analysis.transcripts import detect
from loopfuse.analysis.transcripts.detect import READERS, read_path, sniff
from loopfuse.analysis.transcripts.model import ToolCall
from loopfuse.analysis.transcripts.tally import ReadTally
from loopfuse.cli import main


@pytest.fixture
def sessions(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Two normalized runs; the reader fails partway through ``bad.jsonl``."""
    for name in ("bad", "good"):
        rows = [{"meta": {"id": f"{name}-run"}}, {"tool": "ls", "args": {}}, {"tool": "ls", "args": {}}]
        (tmp_path / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    real = READERS["normalized"]

    def fails_on_bad(path: Path, tally: ReadTally) -> Iterator[ToolCall]:
        for number, call in enumerate(real(path, tally)):
            if path.name == "bad.jsonl" and number == 1:
                raise TypeError("unhashable type: 'list'")
            yield call

    monkeypatch.setitem(READERS, "normalized", fails_on_bad)
    return tmp_path


def test_a_failing_reader_skips_and_counts_only_that_file(sessions: Path) -> None:
    tally = ReadTally()
    calls = list(read_path(sessions, tally))
    assert [c.run for c in calls] == ["bad-run", "good-run", "good-run"]  # bad's calls before the failure
    (skipped,) = tally.skipped_files
    assert skipped.path == sessions / "bad.jsonl"
    assert skipped.reason == "content its reader could not use (TypeError: unhashable type: 'list')"
    assert tally.malformed == 1 and tally.unreadable == 0


def test_scan_names_a_named_file_its_reader_failed_on(
    sessions: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["scan", str(sessions / "bad.jsonl")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"loopfuse: cannot read {sessions / 'bad.jsonl'}: content its reader could not use")
    assert "Traceback" not in err
    assert main(["scan", str(sessions)]) == 0
    out = capsys.readouterr().out
    assert "bad.jsonl: content its reader could not use (TypeError" in out and "good-run" in out


def test_detection_never_raises_on_content(tmp_path: Path) -> None:
    deep = tmp_path / "deep.jsonl"
    deep.write_text("[" * 20_000 + "]" * 20_000 + "\n")  # too deeply nested for json
    typed = tmp_path / "typed.jsonl"
    typed.write_text(json.dumps({"type": ["a", "list"], "sessionId": "s", "payload": {}}) + "\n")
    assert sniff(deep) is None and sniff(typed) is None


def test_a_first_line_longer_than_is_read_is_judged_by_its_first_members(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(detect, "_FIRST_LINE_BYTES", 1024, raising=False)  # not 16 MiB
    paste = {"parentUuid": None, "sessionId": "s", "type": "user", "message": {"content": "x" * 100_000}}
    codex = {"timestamp": "t", "type": "response_item", "payload": {"output": "x" * 100_000}}
    for name, row in (("claude.jsonl", paste), ("codex.jsonl", codex)):
        (tmp_path / name).write_text(json.dumps(row) + "\n")
    assert (sniff(tmp_path / "claude.jsonl"), sniff(tmp_path / "codex.jsonl")) == ("claude-code", "codex")
