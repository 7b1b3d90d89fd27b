"""A file the command cannot read, and the command run as a user who cannot read it."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli.test_incidents import cli_env, loopfuse

NOBODY = 65534


@contextlib.contextmanager
def unreadable_file(name: str, content: bytes) -> Iterator[Path]:
    """A file holding ``content`` that only root may read, in a folder anyone may enter."""
    with tempfile.TemporaryDirectory() as folder:
        Path(folder).chmod(0o755)
        path = Path(folder) / name
        path.write_bytes(content)
        path.chmod(0)
        yield path


def loopfuse_unprivileged(*args: str) -> subprocess.CompletedProcess[str]:
    """``loopfuse ARGS``; as user nobody when this runs as root, who reads any file (skipped
    if nobody cannot run loopfuse from this checkout)."""
    user = None
    if os.geteuid() == 0:
        if not nobody_runs_loopfuse():
            pytest.skip("running as root, and user nobody cannot run loopfuse from this checkout")
        user = NOBODY
    return loopfuse(*args, user=user)


def nobody_runs_loopfuse() -> bool:
    probe = [sys.executable, "-c", "import loopfuse.cli"]
    try:
        return (
            subprocess.run(probe, capture_output=True, env=cli_env(), user=NOBODY, check=False).returncode
            == 0
        )
    except OSError:  # the interpreter itself is out of nobody's reach
        return False
