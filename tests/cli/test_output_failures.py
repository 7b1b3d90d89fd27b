"""The command's own output cannot be written: a message and status 2, never a traceback;
a reader that goes away early (``| head``) is not an error."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.analysis.conftest import REPO

COMMANDS = [
    ["scan", "examples"],
    ["replay", "examples/search_loop.jsonl"],
    ["incidents", "examples/incidents.jsonl"],
]
FULL = "loopfuse: cannot write the output: No space left on device\n"
CLOSED = "loopfuse: cannot write the output: standard output is closed\n"


def shell(argv: list[str], redirect: str) -> subprocess.CompletedProcess[str]:
    """``loopfuse ARGV REDIRECT`` in bash, with the command's own exit status."""
    command = shlex.join([sys.executable, "-m", "loopfuse.cli", *argv])
    script = f"{command} {redirect}; exit ${{PIPESTATUS[0]}}"
    env = dict(os.environ, PYTHONPATH=str(REPO / "src"))
    return subprocess.run(
        ["bash", "-c", script], capture_output=True, text=True, cwd=REPO, env=env, timeout=60
    )


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
@pytest.mark.parametrize("argv", COMMANDS, ids=lambda a: a[0])
def test_a_full_disk_is_a_message_and_status_2(argv: list[str]) -> None:
    done = shell(argv, "> /dev/full")
    assert (done.returncode, done.stderr) == (2, FULL)


@pytest.mark.parametrize("argv", COMMANDS, ids=lambda a: a[0])
def test_a_closed_standard_output_is_a_message_and_status_2(argv: list[str]) -> None:
    done = shell(argv, ">&-")
    assert (done.returncode, done.stderr) == (2, CLOSED)


@pytest.mark.parametrize("argv", COMMANDS, ids=lambda a: a[0])
def test_a_reader_that_stops_early_ends_the_command_quietly(argv: list[str]) -> None:
    done = shell(argv, "| head -c 1 >/dev/null")
    assert (done.returncode, done.stderr) == (0, "")


@pytest.mark.parametrize("argv", COMMANDS, ids=lambda a: a[0])
def test_a_closed_standard_error_changes_nothing(argv: list[str]) -> None:
    done = shell(argv, "2>&-")
    assert done.returncode == 0 and done.stdout


def test_python_dash_m_loopfuse_is_the_command() -> None:
    env = dict(os.environ, PYTHONPATH=str(REPO / "src"))
    done = subprocess.run(
        [sys.executable, "-m", "loopfuse", "replay", "examples/search_loop.jsonl"],
        capture_output=True, text=True, cwd=REPO, env=env, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0 and done.stdout.startswith("== search-loop"), done.stderr
