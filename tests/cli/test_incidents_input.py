"""``loopfuse incidents`` on a long log and on input it cannot use: the whole log is shown,
and a folder, an unreadable log or a bad ``--interval`` is exit 2 with a message, never a
traceback or a silent wait."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from tests.cli.test_incidents import TIMEOUT, LineReader, following, incidents
from tests.cli.unreadable import loopfuse_unprivileged, unreadable_file
from tests.incidents.conftest import append, incident_line


def test_a_log_longer_than_a_read_is_shown_to_its_end(log: Path) -> None:
    append(log, "".join(incident_line(f"agent-{i:05d}") for i in range(20_000)))  # about 2.4 MB
    out = incidents(str(log))
    assert out.returncode == 0, out.stderr
    rows = out.stdout.splitlines()[1:]
    assert [row.split()[1] for row in rows] == [f"agent-{i:05d}" for i in range(20_000)]


@pytest.mark.parametrize("follow", [[], ["-f", "--interval", "0.05"]], ids=["once", "follow"])
def test_a_folder_is_refused_with_exit_2(tmp_path: Path, follow: list[str]) -> None:
    out = incidents(str(tmp_path), *follow)  # with -f it used to wait forever, silently
    assert out.returncode == 2
    assert f"{tmp_path} is a folder, not an incident log" in out.stderr
    assert out.stdout == "" and "Traceback" not in out.stderr


def test_a_log_that_appears_as_a_folder_while_following_exits_2(log: Path) -> None:
    proc = following(log)
    try:
        assert LineReader(proc).next().split()[0] == "time"  # the header: it waits for the log
        log.mkdir()
        assert proc.wait(timeout=TIMEOUT) == 2
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=TIMEOUT)
    assert proc.stderr is not None
    with proc.stderr:
        assert f"cannot read the incident log {log}: Is a directory" in proc.stderr.read()


def test_an_unreadable_log_exits_2() -> None:
    with unreadable_file("incidents.jsonl", incident_line("hidden").encode()) as log:
        out = loopfuse_unprivileged("incidents", str(log))
    assert out.returncode == 2, out.stderr
    assert f"cannot read the incident log {log}: Permission denied" in out.stderr
    assert out.stdout == ""


def test_a_path_under_a_file_exits_2(log: Path) -> None:
    append(log, incident_line("a"))
    out = incidents(str(log / "nested.jsonl"))
    assert out.returncode == 2
    assert f"cannot read the incident log {log / 'nested.jsonl'}: Not a directory" in out.stderr


@pytest.mark.parametrize("interval", ["nan", "inf", "-inf", "0", "-1", "soon"])
def test_interval_must_be_a_finite_number_above_0(log: Path, interval: str) -> None:
    out = incidents(str(log), "-f", f"--interval={interval}")
    assert out.returncode == 2
    assert f"argument --interval: '{interval}' is not a number of seconds above 0" in out.stderr
    assert "Traceback" not in out.stderr and out.stdout == ""


def test_lines_too_deeply_nested_or_not_incidents_are_skipped_and_counted(log: Path) -> None:
    """A line nested too deep to parse raised RecursionError: a traceback here, and a crash
    of the supervisor in the host, losing the incidents around it."""
    append(log, incident_line("a") + "[" * 100_000 + "\nnot json\n" + incident_line("b"))
    out = incidents(str(log))
    assert out.returncode == 0, out.stderr
    assert [row.split()[1] for row in out.stdout.splitlines()[1:]] == ["a", "b"]
    assert out.stderr == "loopfuse: 2 lines skipped (not incidents)\n"


def test_an_invalid_config_given_with_a_path_exits_2(log: Path, tmp_path: Path) -> None:
    """With PATH given, ``--config`` was never read: a broken file passed unnoticed."""
    config = tmp_path / "zero.toml"
    config.write_text("[duplicate]\nlimit = 0\n")
    done = incidents(str(log), "--config", str(config))
    assert done.returncode == 2
    assert f"configuration file {str(config)!r}: [duplicate] limit = 0 is not allowed" in done.stderr


def test_a_proxy_incident_log_it_cannot_write_is_blamed_on_the_option() -> None:
    """The flag's log was named as the configuration file's ``[guard] incident_log``."""
    with tempfile.TemporaryDirectory() as top:  # under /tmp, where user nobody may enter
        Path(top).chmod(0o755)
        folder, config = Path(top) / "read-only", Path(top) / "loopfuse.toml"
        folder.mkdir(mode=0o555)
        config.write_text("[duplicate]\nlimit = 3\n")
        log = str(folder / "incidents.jsonl")
        done = loopfuse_unprivileged("proxy", "--config", str(config), "--incident-log", log, "--", "cat")
    assert done.returncode == 2
    assert f"--incident-log {log!r} is not allowed: expected a file this process can write" in done.stderr
    assert "configuration file" not in done.stderr
