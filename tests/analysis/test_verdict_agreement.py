"""``scan``, ``replay`` and ``eval`` agree on what a loop is: a run is a ``loop`` in the scan
exactly when the guard, replaying it in shadow mode, denies a call, and the row names
that first denial (breaker, rule, step) as ``replay`` lists it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from loopfuse import Guard, parse_config
from loopfuse.analysis.replay import replay_calls, shadow_config
from loopfuse.analysis.scanstats import scan_calls
from loopfuse.config import GuardConfig
from loopfuse.evaluation import guard_detector
from loopfuse.transcripts.base import ReadTally
from loopfuse.transcripts.detect import Source, read_source, sources
from tests.analysis.conftest import FIXTURES, SHARED

CONFIGS = {
    "defaults": {},
    "strict": {
        "circuit_breaker": {"duplicate_limit": 3, "max_calls_per_agent": 40},
        "loop_brake": {"max_repeats": 2},
        "invalid": {"limit": 2},
        "same_error": {"limit": 2, "identical_limit": 2},
    },
}


def corpus_sample() -> list[Path]:
    """Every 4th run of each shared corpus, in name order (about 50 runs)."""
    return [p for folder in sorted(SHARED.glob("*/")) for p in sorted(folder.glob("*.jsonl"))[::4]]


def all_sources(paths: list[Path]) -> Iterator[Source]:
    yield from sources(paths, ReadTally())


def check_agreement(source: Source, config: GuardConfig) -> int:
    """Scan's rows against replay's reports and eval's detector on one source; the number of loops."""
    calls = list(read_source(source, ReadTally()))
    rows = {(r.run, r.agent): r for r in scan_calls(calls, guard=Guard(shadow_config(config)))}
    reports = {(r.run, r.agent): r for r in replay_calls(calls, Guard(shadow_config(config)))}
    assert rows.keys() == reports.keys(), source.path
    for key, row in rows.items():
        first = reports[key].denials[0] if reports[key].denials else None
        assert (row.verdict == "loop") == (first is not None), (source.path, key)
        if first is not None:
            assert (row.breaker, row.rule, row.denied_at) == (first.kind, first.rule or None, first.step)
        for agent_calls in [[c for c in calls if (c.run, c.agent) == key]]:
            assert guard_detector(lambda: Guard(shadow_config(config)))(agent_calls) == row.denied_at
    return sum(r.verdict == "loop" for r in rows.values())


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_every_fixture_run(name: str) -> None:
    config = parse_config(CONFIGS[name])
    found = list(all_sources([FIXTURES]))
    assert len(found) >= 15
    loops = sum(check_agreement(source, config) for source in found)
    assert loops >= 1  # the agreement is tested on loops, not only on healthy runs


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_a_sample_of_the_shared_corpora(name: str) -> None:
    if not SHARED.is_dir():
        pytest.skip("the shared corpora (../shared/corpus) are absent")
    config = parse_config(CONFIGS[name])
    found = list(all_sources(corpus_sample()))
    assert len(found) >= 40
    loops = sum(check_agreement(source, config) for source in found)
    assert loops >= 5


def test_the_scan_and_replay_commands_agree(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """What a user reads: each run's verdict in ``scan --json`` against the first denial
    ``replay`` prints for it, with the same configuration file, on every fixture format."""
    config = tmp_path / "loopfuse.toml"
    config.write_text("[circuit_breaker]\nduplicate_limit = 3\n[loop_brake]\nmax_repeats = 2\n")
    scanned = json.loads(cli("scan", str(FIXTURES), "--json", "--config", str(config)).stdout)["runs"]
    replayed = replay_first_denials(cli("replay", str(FIXTURES), "--config", str(config)).stdout)
    assert len(scanned) == len(replayed) >= 15
    for row in scanned:
        step = replayed[(row["run"], row["agent"])]
        assert (row["verdict"] == "loop") == (step != "-"), row
        assert ("-" if row["denied_at"] is None else str(row["denied_at"])) == step, row
    assert sum(row["verdict"] == "loop" for row in scanned) >= 3


def replay_first_denials(stdout: str) -> dict[tuple[str, str], str]:
    """(run, agent) -> the ``first denial`` column of ``loopfuse replay``'s output."""
    found: dict[tuple[str, str], str] = {}
    run = ""
    for line in stdout.splitlines():
        if line.startswith("== "):
            run = line[3:].rsplit(" (", 1)[0]
        cells = line.split()
        if line.startswith("  ") and len(cells) == 5 and cells[1].isdigit() and cells[0] != "step":
            found[(run, cells[0])] = cells[3]
    return found


def test_scan_and_replay_judge_a_normalized_row_by_its_whole_output(tmp_path: Path) -> None:
    """Outputs that share their first 200 characters but differ after are new results, as
    ``eval`` has always read them: the same call re-run with a new result is not a loop."""
    header = "[File: /repo/module.py (900 lines total)]\n" + "x = 1\n" * 40
    outputs = [f"{header}{i} failed" for i in range(6)]
    rows = [
        {"step": i, "tool": "bash", "args": {"command": "pytest"}, "output": out, "output_excerpt": out[:200]}
        for i, out in enumerate(outputs)
    ]
    path = tmp_path / "run.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    config = parse_config(
        {"stall": {"limit": 2}, "repeat": {"enabled": False}, "duplicate": {"enabled": False}}
    )
    (source,) = list(all_sources([path]))
    calls = list(read_source(source, ReadTally()))
    assert [c.result for c in calls] == outputs
    assert check_agreement(source, config) == 0
