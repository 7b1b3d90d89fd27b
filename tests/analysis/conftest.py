"""Fixtures for the scan/replay/eval tests: the fixture folder, the dev corpus, the CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"
REPO = Path(__file__).resolve().parents[2]
# ../shared/corpus beside the clone (or beside the folder of worktrees a clone's worktree is in)
SHARED = next(
    (
        p / "shared" / "corpus"
        for p in (REPO.parent, REPO.parent.parent)
        if (p / "shared" / "corpus").is_dir()
    ),
    REPO.parent / "shared" / "corpus",
)
CORPUS = SHARED / "dev"


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


CLI = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def cli() -> CLI:
    return run_cli


LONG = "swe-bench-verified__django__django-11099-attempt-"  # 49 characters, then 1 or 2


def write_run(path: Path, run: str, calls: list[tuple[str, dict[str, str]]], agent: str = "main") -> None:
    """A normalized JSON-lines session: a meta line, then one line per (tool, args)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    rows = [{"meta": {"id": run}}] + [
        {"step": i, "tool": tool, "args": args, "output_excerpt": "same", "agent": agent}
        for i, (tool, args) in enumerate(calls)
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def build_corpus(root: Path) -> Path:
    """A small corpus a user could have: two looping runs of the same name in two folders,
    two long names alike in their first 49 characters, a healthy run, and files that are
    skipped for four different reasons."""
    search = [("web_search", {"q": "loopfuse"})] * 8
    reads = [("read_file", {"path": f"src/{n}.py"}) for n in ("a", "b", "c", "a", "d")]
    write_run(root / "team-a/session.jsonl", "nightly-build", search)
    write_run(root / "team-b/session.jsonl", "nightly-build", [("read_file", {"path": "x.py"})] * 12)
    write_run(root / "team-b/first.jsonl", LONG + "1", reads)
    write_run(root / "team-b/second.jsonl", LONG + "2", reads[:3])
    damaged = root / "team-b/second.jsonl"
    lines = damaged.read_text().splitlines(keepends=True)
    damaged.write_text("".join([*lines[:2], '{"step": 9, "tool": BROKEN\n', *lines[2:]]))
    (root / "notes.txt").write_text("meeting notes, not a session\n")
    (root / "empty.jsonl").write_text("")
    (root / "broken.json").write_text('{"messages": [\n  {"role": "user", "content": \n')
    (root / "labels.json").write_text('{"nightly-build": "loop"}\n')
    return root


@pytest.fixture
def corpus_dir(tmp_path: Path) -> Path:
    return build_corpus(tmp_path / "sessions")
