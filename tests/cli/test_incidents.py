"""``loopfuse incidents``: the table, --json, --follow, and the configured default path."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO

from loopfuse import Guard
from tests.incidents.conftest import append, incident_line

TIMEOUT = 20


def cli_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(Path(__file__).resolve().parents[2] / "src"), *filter(None, [os.environ.get("PYTHONPATH")])]
    )
    env.pop("LOOPFUSE_CONFIG", None)
    return env


def incidents(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return loopfuse("incidents", *args, cwd=cwd)


def loopfuse(
    *args: str, cwd: Path | None = None, user: int | None = None
) -> subprocess.CompletedProcess[str]:
    """``loopfuse ARGS`` run as the user sees it, bounded in time."""
    return subprocess.run(
        [sys.executable, "-m", "loopfuse.cli", *args],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        env=cli_env(),
        preexec_fn=_interruptible,
        cwd=cwd,
        user=user,
        check=False,
    )


def test_table_shows_time_agent_kind_tool_and_counts(log: Path) -> None:
    append(log, incident_line("agent-007", kind="cap", tool="bash"))
    out = incidents(str(log))
    assert out.returncode == 0, out.stderr
    header, row = out.stdout.splitlines()
    assert header.split() == ["time", "agent", "kind", "tool", "count/limit"]
    assert row.split() == ["2026-09-01T23:10:07Z", "agent-007", "cap", "bash", "6/6"]


def test_table_of_a_real_guard_log_names_object_agents_without_their_values(tmp_path: Path) -> None:
    log = tmp_path / "incidents.jsonl"
    guard = Guard.from_config({"circuit_breaker": {"duplicate_limit": 1, "incident_log": str(log)}})

    class Session:
        def __init__(self) -> None:
            self.token = "CANARY-secret"

    session = Session()
    for agent in ("worker-1", session):
        guard.check("web_search", {"q": "CANARY-query"}, agent)
        guard.check("web_search", {"q": "CANARY-query"}, agent)
    out = incidents(str(log))
    rows = out.stdout.splitlines()[1:]
    assert [r.split()[1:4] for r in rows] == [
        ["worker-1", "duplicate", "web_search"],
        ["<object>", "duplicate", "web_search"],
    ]
    assert "CANARY" not in out.stdout


def test_json_prints_one_object_per_line(log: Path) -> None:
    append(log, incident_line("a") + incident_line("b", kind="repeat"))
    out = incidents(str(log), "--json")
    records = [json.loads(line) for line in out.stdout.splitlines()]
    assert [(r["agent"], r["kind"]) for r in records] == [("a", "duplicate"), ("b", "repeat")]


def test_path_defaults_to_the_configured_incident_log(tmp_path: Path) -> None:
    (tmp_path / "logs").mkdir()
    append(tmp_path / "logs" / "trips.jsonl", incident_line("from-config"))
    (tmp_path / "loopfuse.toml").write_text('[circuit_breaker]\nincident_log = "logs/trips.jsonl"\n')
    out = incidents(cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "from-config" in out.stdout


def test_no_path_and_no_configured_log_is_a_usage_error(tmp_path: Path) -> None:
    out = incidents(cwd=tmp_path)
    assert out.returncode == 2
    assert "incident_log" in out.stderr


def test_missing_log_means_no_incidents_yet(tmp_path: Path) -> None:
    out = incidents(str(tmp_path / "none.jsonl"))
    assert out.returncode == 0
    assert "no incident log" in out.stderr and out.stdout == ""


def following(log: Path, *flags: str) -> subprocess.Popen[str]:
    """``loopfuse incidents LOG --follow`` polling every 0.05 s, started in the background."""
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "loopfuse.cli",
            "incidents",
            str(log),
            "--follow",
            "--interval",
            "0.05",
            *flags,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=cli_env(),
        preexec_fn=_interruptible,
    )


def _interruptible() -> None:
    """Ctrl-C reaches the child as in a terminal, even when this run was started in the
    background (a shell starts background jobs with SIGINT ignored, and children inherit it)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


class LineReader:
    """Reads a subprocess's stdout on a thread so the test can wait with a deadline."""

    def __init__(self, proc: subprocess.Popen[str]) -> None:
        self.lines: queue.Queue[str] = queue.Queue()
        assert proc.stdout is not None
        threading.Thread(target=self._pump, args=(proc.stdout,), daemon=True).start()

    def _pump(self, stdout: IO[str]) -> None:
        with stdout:  # closed at end of file (the process exited or was killed)
            for line in stdout:
                self.lines.put(line)

    def next(self, timeout: float = TIMEOUT) -> str:
        return self.lines.get(timeout=timeout).rstrip("\n")


def test_follow_prints_lines_as_they_arrive_and_ctrl_c_exits_0(log: Path) -> None:
    append(log, incident_line("before"))
    proc = following(log, "--json")
    try:
        out = LineReader(proc)
        assert json.loads(out.next())["agent"] == "before"
        append(log, incident_line("after")[:30])
        time.sleep(0.2)
        append(log, incident_line("after")[30:] + incident_line("third"))
        assert json.loads(out.next())["agent"] == "after"
        assert json.loads(out.next())["agent"] == "third"
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=TIMEOUT) == 0, proc.stderr.read() if proc.stderr else None
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=TIMEOUT)
        assert proc.stderr is not None
        proc.stderr.close()


def test_follow_waits_for_a_log_that_does_not_exist_yet(log: Path) -> None:
    proc = following(log)
    try:
        out = LineReader(proc)
        assert out.next().split()[0] == "time"
        append(log, incident_line("late"))
        assert out.next().split()[1] == "late"
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=TIMEOUT) == 0, proc.stderr.read() if proc.stderr else None
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=TIMEOUT)
        assert proc.stderr is not None
        proc.stderr.close()
