"""``loopfuse replay`` on a named file that is not a recorded session or cannot be read: exit 2
naming the file and why, as ``scan`` (the same check); inside a folder such files are skipped."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.analysis.conftest import run_cli
from tests.cli.unreadable import loopfuse_unprivileged, unreadable_file

NOT_SESSIONS = {
    "garbage.bin": (bytes(range(256)) * 8, "not JSON"),
    "empty.jsonl": (b"", "empty file"),
    "numbers.jsonl": (b"[1, 2]\n", "JSON of another shape"),
}


@pytest.mark.parametrize("name", sorted(NOT_SESSIONS))
def test_a_named_file_that_is_no_session_exits_2(tmp_path: Path, name: str) -> None:
    content, why = NOT_SESSIONS[name]
    (tmp_path / name).write_bytes(content)
    done = run_cli("replay", str(tmp_path / name))
    assert done.returncode == 2
    assert f"{tmp_path / name} is not a recorded agent session" in done.stderr and why in done.stderr
    assert "Traceback" not in done.stderr


def test_the_same_files_inside_a_named_folder_are_skipped(tmp_path: Path) -> None:
    for name, (content, _) in NOT_SESSIONS.items():
        (tmp_path / name).write_bytes(content)
    done = run_cli("replay", str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert "skipped: 3 unknown file(s)" in done.stdout


def test_a_named_file_that_cannot_be_read_exits_2() -> None:
    example = Path(__file__).resolve().parents[2] / "examples" / "healthy_fix.jsonl"
    with unreadable_file("locked.jsonl", example.read_bytes()) as locked:
        done = loopfuse_unprivileged("replay", str(locked))
    assert done.returncode == 2, done.stdout
    assert f"cannot read {locked}: Permission denied" in done.stderr


def test_a_tool_name_that_is_no_valid_unicode_is_printed_not_fatal(tmp_path: Path) -> None:
    """A tool name with a lone surrogate (``\\ud83d`` in the JSON: a name cut mid-emoji) in a
    session whose loop replay reports: shown as U+FFFD, not a traceback."""
    lines = []
    for n in range(8):
        use = {"type": "tool_use", "id": f"t{n}", "name": "probe\\ud83d", "input": {"q": "x"}}
        result = {"type": "tool_result", "tool_use_id": f"t{n}", "content": "the same answer"}
        lines.append(json.dumps({"type": "assistant", "sessionId": "s", "message": {"content": [use]}}))
        lines.append(json.dumps({"type": "user", "sessionId": "s", "message": {"content": [result]}}))
    session = tmp_path / "session.jsonl"
    session.write_text("\n".join(lines).replace("\\\\ud83d", "\\ud83d") + "\n")

    done = run_cli("replay", str(session))

    assert done.returncode == 0, done.stderr
    assert "probe\ufffd" in done.stdout and "duplicate" in done.stdout


@pytest.mark.parametrize("given", ["", " "])
def test_an_empty_config_path_is_named_not_read_as_the_current_folder(given: str) -> None:
    """``--config ""`` was the current folder: "configuration file '.' cannot be read"."""
    done = run_cli("replay", "examples/search_loop.jsonl", "--config", given, cwd=Path(__file__).parents[2])
    assert done.returncode == 2
    assert f"loopfuse: configuration file {given!r} is not allowed: expected a file's path" in done.stderr
