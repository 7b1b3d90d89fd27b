"""What ``loopfuse scan`` shows a user: where each run came from, whole names, what was
skipped and why, and a progress bar that moves within one big file."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
import threading
from pathlib import Path

from tests.analysis.conftest import LONG, REPO

SKIPPED = {
    "notes.txt": "not a session format loopfuse reads (not JSON)",
    "empty.jsonl": "empty file",
    "broken.json": "not valid JSON at line 3: Expecting value",
    "labels.json": "not a session format loopfuse reads (JSON of another shape)",
    "team-b/second.jsonl": "1 malformed line(s) skipped, the first at line 3",
}


def table_rows(stdout: str) -> list[list[str]]:
    return [
        line.split() for line in stdout.splitlines() if line.split()[:1] in (["loop"], ["suspect"], ["ok"])
    ]


def test_the_table_shows_each_runs_path_and_whole_name(cli, corpus_dir: Path) -> None:  # type: ignore[no-untyped-def]
    done = cli("scan", str(corpus_dir))
    assert done.returncode == 0, done.stderr
    rows = table_rows(done.stdout)
    assert [(r[0], r[1], r[-1]) for r in rows] == [
        ("loop", "nightly-build", "team-b/session.jsonl"),  # 12 in a row: the worse loop first
        ("loop", "nightly-build", "team-a/session.jsonl"),
        ("ok", LONG + "1", "team-b/first.jsonl"),
        ("ok", LONG + "2", "team-b/second.jsonl"),
    ]
    assert f"path (under {corpus_dir})" in done.stdout.splitlines()[1]


def test_skipped_files_are_listed_with_why_after_the_table(cli, corpus_dir: Path) -> None:  # type: ignore[no-untyped-def]
    lines = cli("scan", str(corpus_dir)).stdout.splitlines()
    start = lines.index("skipped:")
    listed = dict(line.strip().split(": ", 1) for line in lines[start + 1 : -1])
    assert listed == SKIPPED
    assert lines[-1].startswith(
        "files read: 1 chat-json, 4 normalized; skipped: 3 unknown file(s), 2 malformed"
    )


def test_json_has_paths_and_the_skipped_list(cli, corpus_dir: Path) -> None:  # type: ignore[no-untyped-def]
    out = json.loads(cli("scan", str(corpus_dir), "--json").stdout)
    assert out["root"] == str(corpus_dir)
    assert [(r["run"], r["path"]) for r in out["runs"]][:2] == [
        ("nightly-build", "team-b/session.jsonl"),
        ("nightly-build", "team-a/session.jsonl"),
    ]
    assert {s["path"]: s["reason"] for s in out["skipped_files"]} == SKIPPED
    assert out["skipped"]["unknown_files"] == 3 and out["skipped"]["malformed"] == 2


def test_no_two_rows_show_the_same_name_and_path(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    talk = [
        {"role": "assistant", "tool_calls": [{"id": "c1", "function": {"name": "add", "arguments": "{}"}}]}
    ]
    lines = [
        {"id": "standup", "messages": talk},
        {"id": "retro", "messages": talk},
        {"id": "standup", "messages": talk},
    ]
    (tmp_path / "conversations.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    named = cli("scan", str(tmp_path / "conversations.jsonl"), str(tmp_path))  # the file twice: read once
    rows = table_rows(named.stdout)
    assert sorted(r[1] for r in rows) == ["retro", "standup", "standup#2"]
    assert {r[-1] for r in rows} == {"conversations.jsonl"}


def test_a_named_empty_file_is_a_usage_error(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    empty = tmp_path / "session.jsonl"
    empty.write_text("")
    done = cli("scan", str(empty))
    assert done.returncode == 2 and done.stdout == ""
    assert f"{empty} is not a recorded agent session in a format loopfuse reads (empty file)" in done.stderr


def test_control_characters_in_names_are_escaped(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "s.jsonl").write_text('{"meta": {"id": "evil\\u001b[2Jname"}}\n{"tool": "t", "args": {}}\n')
    done = cli("scan", str(tmp_path))
    assert "\x1b" not in done.stdout and "evil\\x1b[2Jname" in done.stdout


def test_the_progress_bar_moves_within_one_big_file(tmp_path: Path) -> None:
    """On a terminal, a single 8 MB file shows intermediate percentages, not 0% then done."""
    big = tmp_path / "session.jsonl"
    filler = json.dumps(
        {"type": "assistant", "sessionId": "s1", "uuid": "u", "message": {"content": "x" * 900}}
    )
    big.write_text((filler + "\n") * 9000)
    shown = _stderr_on_a_terminal(["scan", str(big)])
    percents = {int(part.split("%")[0].split()[-1]) for part in shown.split("\r") if "%" in part}
    assert len({p for p in percents if 0 < p < 100}) >= 5, shown[:500]
    assert 100 in percents


def _stderr_on_a_terminal(args: list[str]) -> str:
    leader, follower = pty.openpty()
    env = dict(os.environ, PYTHONPATH=str(REPO / "src"))
    proc = subprocess.Popen(
        [sys.executable, "-m", "loopfuse.cli", *args], stdout=subprocess.PIPE, stderr=follower, env=env
    )
    os.close(follower)
    chunks: list[bytes] = []
    reader = threading.Thread(target=_drain, args=(leader, chunks))
    reader.start()
    proc.communicate(timeout=60)
    reader.join(timeout=10)
    os.close(leader)
    return b"".join(chunks).decode(errors="replace")


def _drain(fd: int, chunks: list[bytes]) -> None:
    while True:
        try:
            data = os.read(fd, 4096)
        except OSError:  # the terminal's other end closed
            return
        if not data:
            return
        chunks.append(data)


def test_a_named_file_that_cannot_be_parsed_is_a_usage_error(cli, corpus_dir: Path) -> None:  # type: ignore[no-untyped-def]
    broken = corpus_dir / "broken.json"
    done = cli("scan", str(broken))
    assert done.returncode == 2 and done.stdout == ""
    assert f"cannot read {broken}: not valid JSON at line 3: Expecting value" in done.stderr


def test_a_long_skipped_list_is_cut_after_ten_and_json_has_them_all(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    for n in range(15):
        (tmp_path / f"note-{n:02}.txt").write_text("notes\n")
    lines = cli("scan", str(tmp_path)).stdout.splitlines()
    listed = lines[lines.index("skipped:") + 1 : -1]
    assert len(listed) == 11 and listed[-1] == "  ... and 5 more (--json lists them)"
    assert len(json.loads(cli("scan", str(tmp_path), "--json").stdout)["skipped_files"]) == 15
