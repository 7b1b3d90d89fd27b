"""The incident log: the first denial per agent per kind, one JSON line."""

from __future__ import annotations

import json
import logging
import os
import stat
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

from loopfuse import Guard
from loopfuse.incident_reader import IncidentReader
from tests.cli.test_incidents import cli_env
from tests.cli.unreadable import NOBODY, nobody_runs_loopfuse


def guard_logging_to(path: Path, **cb: Any) -> Guard:
    return Guard.from_config({"circuit_breaker": {"incident_log": str(path), **cb}})


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_first_denial_per_agent_per_kind_is_logged_once(tmp_path: Path) -> None:
    log = tmp_path / "incidents.jsonl"
    guard = guard_logging_to(log, duplicate_limit=1, max_calls_per_agent=3)
    for _ in range(5):
        guard.check("bash", {"command": "ls"}, "agent-007")
    guard.check("read", {"p": 1}, "agent-007")
    guard.check("read", {"p": 2}, "agent-007")
    guard.check("read", {"p": 3}, "agent-007")
    guard.check("bash", {"command": "ls"}, "agent-008")
    guard.check("bash", {"command": "ls"}, "agent-008")
    rows = lines(log)
    assert [(r["agent"], r["kind"]) for r in rows] == [
        ("agent-007", "duplicate"),
        ("agent-007", "cap"),
        ("agent-008", "duplicate"),
    ]
    first = rows[0]
    assert set(first) == {"time", "kind", "tool", "count", "limit", "agent"}
    assert (first["tool"], first["count"], first["limit"]) == ("bash", 1, 1)
    assert first["time"].endswith("Z") and first["time"][10] == "T"


def test_log_is_created_owner_only(tmp_path: Path) -> None:
    log = tmp_path / "incidents.jsonl"
    guard = guard_logging_to(log, duplicate_limit=1)
    guard.check("f", {}, "a")
    guard.check("f", {}, "a")
    assert stat.S_IMODE(log.stat().st_mode) == 0o600


def test_object_agent_is_named_by_an_id_attribute(tmp_path: Path) -> None:
    class Session:
        def __init__(self) -> None:
            self.session_id = "sess-42"
            self.token = "s3cret"

    log = tmp_path / "i.jsonl"
    guard = guard_logging_to(log, duplicate_limit=1)
    agent = Session()
    guard.check("f", {}, agent)
    guard.check("f", {}, agent)
    assert lines(log)[0]["agent"] == "sess-42"


def test_object_agent_without_id_logs_its_attribute_names_only(tmp_path: Path) -> None:
    class Anonymous:
        def __init__(self) -> None:
            self.token = "s3cret-value"
            self.model = "m"

    log = tmp_path / "i.jsonl"
    guard = guard_logging_to(log, duplicate_limit=1)
    agent = Anonymous()
    guard.check("f", {}, agent)
    guard.check("f", {}, agent)
    row = lines(log)[0]
    assert row["agent_keys"] == ["model", "token"] and "agent" not in row
    assert "s3cret" not in log.read_text()


def test_unwritable_log_never_changes_a_decision(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    log = tmp_path / "gone-dir" / "incidents.jsonl"
    log.parent.mkdir()
    guard = guard_logging_to(log, duplicate_limit=1)
    log.parent.rmdir()  # valid when the guard was built, gone by the first denial
    with caplog.at_level(logging.WARNING, logger="loopfuse"):
        results = [guard.check("f", {}, agent).allowed for agent in ("a", "a", "b", "b")]
    assert results == [True, False, True, False]
    assert guard.stats()["fail_open"] == {"incident_log": 2}
    assert len([r for r in caplog.records if "incident log" in r.getMessage()]) == 1


def test_no_log_by_default(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    guard = Guard.from_config({"circuit_breaker": {"duplicate_limit": 1}})
    guard.check("f", {}, "a")
    guard.check("f", {}, "a")
    assert list(tmp_path.iterdir()) == []


FORGED = "search\n2026-12-03 loopfuse: all clear \x1b[31m\udcff"


def test_a_made_up_name_cannot_forge_a_log_line(caplog: pytest.LogCaptureFixture) -> None:
    """The model names the tool (and may shape an agent id): a log line shows their
    unprintable characters as escapes, one line per record, with no terminal codes."""
    guard = Guard.from_config({"duplicate": {"limit": 1}})
    with caplog.at_level(logging.WARNING, logger="loopfuse"):
        for _ in range(2):
            guard.check(FORGED, {}, agent=FORGED)
    [line] = [r.getMessage() for r in caplog.records]
    assert line.isprintable()
    assert r"search\n2026-12-03 loopfuse: all clear \x1b[31m\udcff" in line


def test_a_name_with_a_lone_surrogate_is_logged_as_valid_utf8(tmp_path: Path) -> None:
    log = tmp_path / "incidents.jsonl"
    guard = guard_logging_to(log, duplicate_limit=1)
    for _ in range(2):
        guard.check("tool\udcff", {}, "agent")
    [record] = [json.loads(line) for line in log.read_bytes().decode("utf-8").splitlines()]
    assert record["tool"] == "tool\udcff"


def test_a_tool_name_is_logged_cut_as_the_warning_shows_it(tmp_path: Path) -> None:
    """A 3 MB name made a line no reader takes (over 2 MiB): the incident was never seen."""
    log = tmp_path / "incidents.jsonl"
    guard = guard_logging_to(log, duplicate_limit=1)
    for _ in range(2):
        guard.check("t" * 3_000_000, {}, "a")
    assert lines(log)[0]["tool"] == "t" * 125 + "..."


CUT_SHORT = """
import resource, signal, sys
from loopfuse import Guard
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (int(sys.argv[2]), int(sys.argv[2])))
guard = Guard.from_config({"circuit_breaker": {"incident_log": sys.argv[1], "duplicate_limit": 1}})
for agent in ("first", "second"):
    guard.check("bash", {}, agent), guard.check("bash", {}, agent)
print(guard.stats()["fail_open"])
"""


def test_a_line_cut_short_by_a_full_disk_is_counted_and_the_next_stays_whole(tmp_path: Path) -> None:
    log = tmp_path / "incidents.jsonl"
    whole = subprocess.run(
        [sys.executable, "-c", CUT_SHORT, str(log), "100000"], capture_output=True, text=True
    )
    size = len(log.read_bytes()) // 2
    log.unlink()
    cut = subprocess.run(
        [sys.executable, "-c", CUT_SHORT, str(log), str(size + 10)], capture_output=True, text=True
    )
    assert whole.stdout.strip() == "{}" and cut.stdout.strip() == "{'incident_log': 1}", cut.stderr
    written = log.read_bytes()
    assert written.count(b"\n") == 1 and not written.endswith(b"\n")  # the second line, cut short
    later = guard_logging_to(log, duplicate_limit=1)  # once there is room again
    later.check("bash", {}, "third"), later.check("bash", {}, "third")
    with IncidentReader(log) as reader:
        assert [r["agent"] for r in reader.read()] == ["first", "third"]
        assert reader.skipped == 1


BUILD = """
from loopfuse import ConfigError, Guard
try:
    Guard.from_config({"guard": {"incident_log": %r}})
except ConfigError as error:
    print(error)
"""


def test_a_log_this_process_cannot_write_is_refused_when_the_guard_is_built() -> None:
    """Accepted, it lost the first denial's incident, counted as a fail-open."""
    with tempfile.TemporaryDirectory() as top:  # under /tmp, where user nobody may enter
        folder = Path(top) / "read-only"
        folder.mkdir(mode=0o555)
        Path(top).chmod(0o755)
        user = None
        if os.geteuid() == 0:  # root writes anywhere: build it as user nobody
            if not nobody_runs_loopfuse():
                pytest.skip("running as root, and user nobody cannot run loopfuse from this checkout")
            user = NOBODY
        script = BUILD % str(folder / "incidents.jsonl")
        out = subprocess.run(
            [sys.executable, "-c", script], capture_output=True, text=True, env=cli_env(), user=user
        )
    assert f"({str(folder)!r} is not writable by it)" in out.stdout, out.stderr
    assert "[guard] incident_log" in out.stdout
