from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


def loopfuse(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    return subprocess.run(
        [sys.executable, "-m", "loopfuse.cli", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=60,
    )


def test_replay_examples_shows_where_the_guard_stops_the_loop() -> None:
    out = loopfuse(
        "replay",
        "examples/search_loop.jsonl",
        "examples/healthy_fix.jsonl",
        "--config",
        "examples/loopfuse.toml",
    )
    assert out.returncode == 0, out.stderr
    text = out.stdout
    loop_part, healthy_part = text.split("== healthy-fix")
    assert "web_search" in loop_part and "duplicate" in loop_part
    summary = [line.split() for line in loop_part.splitlines() if line.strip().startswith("researcher ")]
    calls, denied, first, saved = (int(x) for x in summary[0][1:5])
    # Eight warm-up calls, then the loop: its sixth identical search (same result) is refused.
    assert calls == 586 and first == 13 and denied > 0 and saved > 500
    coder = [line.split() for line in healthy_part.splitlines() if line.strip().startswith("coder ")]
    assert coder[0][2] == "0" and coder[0][3] == "-"


def test_replay_counts_each_agent_of_a_run_separately(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    rows: list[dict[str, Any]] = [{"meta": {"id": "r"}}]
    rows += [{"step": i, "tool": "t", "args": {}, "agent": "A" if i % 2 else "B"} for i in range(16)]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    config = tmp_path / "c.toml"
    config.write_text("[circuit_breaker]\nduplicate_limit = 6\n")
    out = loopfuse("replay", str(path), "--config", str(config))
    lines = {
        line.split()[0]: line.split() for line in out.stdout.splitlines() if line.strip()[:2] in ("A ", "B ")
    }
    assert lines["A"][1:3] == ["8", "2"] and lines["B"][1:3] == ["8", "2"]


def test_replay_rejects_a_bad_config_with_exit_2(tmp_path: Path) -> None:
    config = tmp_path / "c.toml"
    config.write_text("[circuit_breaker]\nduplicate_limit = 0\n")
    out = loopfuse("replay", "examples/healthy_fix.jsonl", "--config", str(config))
    assert out.returncode == 2 and "duplicate_limit" in out.stderr


def test_no_command_prints_help_and_exits_2() -> None:
    out = loopfuse()
    assert out.returncode == 2 and "replay" in out.stderr
