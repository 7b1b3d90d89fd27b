"""The three commands as a user runs them: output and exit codes (the HTML report: test_report_html)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest


def test_scan_prints_worst_first_and_reports_skips(cli, fixtures: Path) -> None:  # type: ignore[no-untyped-def]
    done = cli("scan", str(fixtures))
    assert done.returncode == 0, done.stderr
    rows = [line for line in done.stdout.splitlines() if line.startswith(("loop", "suspect", "ok "))]
    assert rows[0].startswith("loop") and "example-normalized" in rows[0]
    assert "1 unknown file(s)" in done.stdout
    assert "pytest -q" not in done.stdout  # no argument values without --show-args
    assert "scanning" not in done.stderr  # no progress bar when not a terminal


def test_scan_json_show_args_and_fail_on_loop(cli, fixtures: Path) -> None:  # type: ignore[no-untyped-def]
    done = cli("scan", str(fixtures / "normalized"), "--json", "--show-args", "--fail-on-loop")
    assert done.returncode == 1
    out = json.loads(done.stdout)
    (row,) = out["runs"]
    assert (row["verdict"], row["loop_start"], row["longest_run"]) == ("loop", 0, 6)
    assert row["top_args"] == '{"command":"goto 72"}'
    healthy = cli("scan", str(fixtures / "chat"), "--fail-on-loop")
    assert healthy.returncode == 0


@pytest.mark.slow
def test_usage_errors_exit_2(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    assert cli("scan", str(tmp_path / "missing")).returncode == 2
    bad = tmp_path / "bad.toml"
    bad.write_text("[circuit_breaker]\nduplicate_limit = 0\n")
    assert cli("scan", str(tmp_path), "--config", str(bad)).returncode == 2
    assert cli("replay", str(tmp_path / "missing")).returncode == 2
    assert cli("eval", str(tmp_path / "missing"), "--labels", "x.json").returncode == 2
    assert cli("scan", "--no-such-flag").returncode == 2


def test_scan_without_path_searches_default_folders(cli, fixtures: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    shutil.copytree(fixtures / "codex", tmp_path / ".codex")
    done = cli("scan", cwd=tmp_path, env={"HOME": str(tmp_path), "CODEX_HOME": ""})
    assert done.returncode == 0
    assert f"{tmp_path / '.codex/sessions'} (codex)" in done.stdout
    assert ".claude" not in done.stdout.splitlines()[0]
    assert "0199a1b2-7c3d-7e4f-9a0b-1c2d3e4f5a6b" in done.stdout


def test_replay_any_format_in_shadow_mode(cli, fixtures: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    config = tmp_path / "loopfuse.toml"
    config.write_text("[circuit_breaker]\nduplicate_limit = 2\nresult_aware = false\n")
    done = cli("replay", str(fixtures / "claude_code"), str(fixtures / "openhands/trajectory-fix-test.json"),
               "--config", str(config))  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "claude-code" in done.stdout and "openhands-json" in done.stdout
    main_line = next(line for line in done.stdout.splitlines() if line.split()[:1] == ["main"])
    assert main_line.split()[1:] == ["5", "2", "2", "2"]  # calls, denied, first denial step, saved


def test_eval_prints_the_table_on_the_dev_corpus(cli, corpus: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    config = tmp_path / "brake.toml"
    config.write_text("[loop_brake]\nmax_repeats = 3\n")
    done = cli("eval", str(corpus), "--labels", str(corpus / "labels.json"), "--config", str(config))
    assert done.returncode == 0, done.stderr
    assert "49 labeled runs" in done.stdout
    row = next(line for line in done.stdout.splitlines() if line.startswith("brake.toml"))
    caught, _median, fp, healthy, early = row.split()[1:]
    assert caught.endswith("/24") and int(caught.split("/")[0]) >= 15 and fp.endswith("/49")
    assert int(healthy) + int(early) == int(fp.split("/")[0])


def test_eval_compares_with_the_baselines(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    rows = [{"meta": {"id": "loop"}}] + [
        {"step": i, "tool": "goto", "args": {"command": "goto 72"}, "output_excerpt": "same", "agent": "a"}
        for i in range(8)
    ]
    (tmp_path / "loop.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "labels.json").write_text(json.dumps({"loop": {"label": "loop", "loop_start": 0}}))
    done = cli("eval", str(tmp_path), "--labels", str(tmp_path / "labels.json"), "--baselines")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    in_a_row = next(line for line in lines if line.startswith("baseline: 4th identical in a row"))
    assert in_a_row.split()[-5:] == ["1/1", "3", "0/1", "0", "0"]
    assert any(
        "against baseline: 5th identical in a row: on the 1 loops both catch" in line for line in lines
    )


def test_version_prints_the_package_version(cli) -> None:  # type: ignore[no-untyped-def]
    import loopfuse

    done = cli("--version")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"loopfuse {loopfuse.__version__}"


def test_scan_refuses_a_named_file_it_cannot_read(cli, fixtures: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    notes = tmp_path / "notes.txt"
    notes.write_text("just some notes\n")
    done = cli("scan", str(notes))
    assert done.returncode == 2
    assert f"{notes} is not a recorded agent session" in done.stderr
    # The same file inside a named folder is counted as skipped, not an error.
    assert cli("scan", str(tmp_path)).returncode == 0
    if os.geteuid() != 0:  # root reads any file
        locked = tmp_path / "locked.jsonl"
        locked.write_text("{}\n")
        locked.chmod(0)
        done = cli("scan", str(locked))
        assert done.returncode == 2 and f"cannot read {locked}" in done.stderr
