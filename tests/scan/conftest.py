"""Fixtures for the scan/replay/eval tests: the fixture folder, the dev corpus, the CLI."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"
REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO.parent / "shared" / "corpus" / "dev"


@pytest.fixture
def fixtures() -> Path:
    return FIXTURES


@pytest.fixture
def corpus() -> Path:
    if not (CORPUS / "labels.json").is_file():
        pytest.skip("the dev corpus (../shared/corpus/dev) is absent")
    return CORPUS


def run_cli(
    *args: str, cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``python -m loopfuse.cli ARGS`` with this worktree's source first, bounded in time."""
    full_env = dict(os.environ, **(env or {}))
    full_env["PYTHONPATH"] = os.pathsep.join([str(REPO / "src"), full_env.get("PYTHONPATH", "")])
    return subprocess.run(
        [sys.executable, "-m", "loopfuse.cli", *args],
        capture_output=True, text=True, timeout=60, cwd=cwd, env=full_env, check=False,
    )  # fmt: skip


@pytest.fixture
def cli():  # type: ignore[no-untyped-def]
    return run_cli
