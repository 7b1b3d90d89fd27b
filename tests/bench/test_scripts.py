"""Every script under ``bench/`` runs to the end on a small input and prints each of its rows
with figures: the evidence in ``docs/performance.md`` and ``docs/evaluation.md`` comes from
these scripts, so one that stopped running (a renamed API, a peer's new version, a removed
option) fails here rather than on the next person who measures. No figure's size is asserted:
the machine is shared and noisy, and speed is read from the scripts' own runs.

The scripts start together, three at a time, when the first test here asks for one (most of
their time is start-up and subprocesses); each test waits for its own."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.store_fixtures import require_redis_server

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench"
NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?")
INSTRUCTION_ROWS = ["floor", "watchdog", "one_function", "check", "check_pure", "tool_call", "tool_call_ok"]
INSTRUCTION_ROWS += [
    f"reporting_{half}{off}" for half in ("check", "result") for off in ("", "-without:stall")
]

# Each run: the script and its arguments, small enough for a smoke run ({corpora}: a folder of
# two corpora, made from examples/).
RUNS: dict[str, list[str]] = {
    "check_overhead": ["check_overhead.py", "--quick"],
    "redis_store": ["redis_store.py", "--checks", "40", "--per-process", "5", "--server-calls", "25"],
    "adapters": ["adapters.py", "--calls", "5", "--repeats", "1"],
    "detection_frontier": ["detection_frontier.py", str(ROOT / "examples")],
    "mcp_proxy": ["mcp_proxy.py", "--calls", "10", "--block", "5"],
    "detection_eval": ["detection_eval.py", "{corpora}"],
    "detection_eval_one": ["detection_eval.py", str(ROOT / "examples")],
    "peers": ["peers.py", "--calls", "200", "--rounds", "2"],
    "compaction": ["compaction.py", "--turns", "6", "--output-chars", "2000", "--trigger", "1000"],
    "scan": ["scan.py", "--size-mb", "2"],
    "detection_shapes": ["detection_shapes.py"],
    **{f"instructions {row}": ["instructions.py", "--child", row, "5"] for row in INSTRUCTION_ROWS},
}


def bench(script: str, *args: str, timeout: float = 600) -> str:
    """What ``python bench/<script> ARGS`` prints, run as the docs say (from the clone, src on the path)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    done = subprocess.run(
        [sys.executable, str(BENCH / script), *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert done.returncode == 0, f"{script} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done.stdout


def two_corpora(root: Path) -> Path:
    """A folder of corpora as ``../shared/corpus`` is laid out: two, each a copy of examples/."""
    for name in ("a", "b"):
        (root / name).mkdir()
        for source in ("labels.json", "search_loop.jsonl", "healthy_fix.jsonl"):
            shutil.copy(ROOT / "examples" / source, root / name / source)
    return root


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Future[str]]]:
    corpora = str(two_corpora(tmp_path_factory.mktemp("corpora")))
    pool = ThreadPoolExecutor(max_workers=3)
    try:
        yield {
            name: pool.submit(bench, *(corpora if arg == "{corpora}" else arg for arg in argv))
            for name, argv in RUNS.items()
        }
    finally:
        pool.shutdown(cancel_futures=True)


def printed(runs: dict[str, Future[str]], name: str) -> str:
    return runs[name].result()


def figures(output: str, label: str) -> list[float]:
    """The numbers on the first line of ``output`` that starts with ``label`` (after indentation)."""
    for line in output.splitlines():
        if line.strip().startswith(label):
            return [float(n.replace(",", "")) for n in NUMBER.findall(line.strip()[len(label) :])]
    raise AssertionError(f"no row {label!r} in:\n{output}")


def test_peers_prints_every_guard_with_its_ratios(runs: dict[str, Future[str]]) -> None:
    output = printed(runs, "peers")
    assert "not installed" not in output  # the dev extra (python3 dev.py check) installs the peers
    for label in (
        "floor: json.dumps(sort_keys) + sha256",
        "one function (bench/one_function.py)",
        "loopfuse check + record_result",
        "loopfuse check",
        "agent-watchdog",
        "loopguard",
        "agent-loop-guard",
        "agent-budget-guard-py (agentguard)",
    ):
        median, p99, to_loopfuse, to_floor = figures(output, label)
        assert 0 < median <= p99 and to_loopfuse > 0 and to_floor > 0, label
    assert re.search(r"^loopfuse check +[\d.]+ +[\d.]+ +1\.00x", output, re.MULTILINE)  # the yardstick


def test_check_overhead_prints_each_section(runs: dict[str, Future[str]]) -> None:
    output = printed(runs, "check_overhead")
    for section in ("argument size", "record_result by result size", "a reporting host", "history", "memory"):
        assert re.search(rf"^== .*{section}", output, re.MULTILINE), section
    assert figures(output, "~100 B arguments, full default")[-1] > 0
    assert figures(output, "100,000 vs 10 prior calls")[-2] > 0
    kib = figures(output, "full default, results reported")[0]
    assert 0 < kib <= 16  # the memory target, which the data structures are sized for


def test_instructions_runs_every_row_and_each_breaker_off(runs: dict[str, Future[str]]) -> None:
    """The work callgrind counts, run without callgrind (valgrind takes minutes): each row of
    ``bench/instructions.py`` and each ``--breakers`` variant does its calls without failing."""
    for row in INSTRUCTION_ROWS:
        assert printed(runs, f"instructions {row}") == ""


@pytest.mark.redis
def test_redis_store_prints_ratios_to_ping_and_throughput(runs: dict[str, Future[str]]) -> None:
    """Run as the docs run it: the script starts a redis-server of its own."""
    require_redis_server()
    output = printed(runs, "redis_store")
    for label in (
        "check, redis://",
        "tool call, redis://",
        "the same, as EVALSHA",
        "the same, 2 round trips",
    ):
        assert figures(output, label)[-1] > 0, label
    assert figures(output, "acheck, redis://")[-1] > 0
    assert figures(output, "all, as EVALSHA")[0] > 0
    state_io, state_bytes = figures(output, "state I/O alone:")[:2]
    assert state_io > 0 and state_bytes > 1000  # an agent's hash after 100 tool calls
    throughput = output.split("\nthroughput", 1)[1].split("\n\n", 1)[0]
    assert re.findall(r"^ +(\d+) +[1-9]\d* +[1-9]\d* +[\d.]+$", throughput, re.MULTILINE) == ["1", "4", "16"]
    assert figures(output, "with results, after 200 distinct calls:")[0] > 0
    if figures(output, "redis-server")[0] >= 7:  # functions came with Redis 7.0
        assert figures(output, "bytes of one Function library in Redis: its code")[0] > 0


def test_adapters_times_every_framework_host(runs: dict[str, Future[str]]) -> None:
    output = printed(runs, "adapters")
    assert "skipped" not in output  # every extra is installed where the suite runs
    for host in (
        "claude-agent-sdk",
        "google-adk",
        "langchain",
        "openai-agents",
        "plain",
        "pydantic-ai",
        "smolagents",
    ):
        without, with_guard, ratio = figures(output, host)[-3:]
        assert without > 0 and with_guard > 0 and ratio > 0, host


def test_mcp_proxy_times_both_servers(runs: dict[str, Future[str]]) -> None:
    output = printed(runs, "mcp_proxy")
    assert output.count("median") == 2 and output.count("p99") == 2
    assert "minimal stdlib server" in output and "FastMCP server" in output


def test_compaction_compares_the_variants(runs: dict[str, Future[str]]) -> None:
    output = printed(runs, "compaction")
    assert figures(output, "plain SummarizationMiddleware")[-1] == 1.0
    assert figures(output, "guarded (defaults)")[-1] < 1.0


def test_scan_reports_its_speed_against_json(runs: dict[str, Future[str]]) -> None:
    output = printed(runs, "scan")
    assert figures(output, "ratio scan/json  :")[0] > 0


def test_detection_shapes_prints_every_shape(runs: dict[str, Future[str]]) -> None:
    output = printed(runs, "detection_shapes")
    loops, honest = output.split("\nhonest work")
    rows = re.findall(r"^\S.*?(?: +(?:\d+|-)){8}$", loops, re.MULTILINE)  # calls, loop, 6 rules
    assert len(rows) == 14 and "default" in output.splitlines()[0]
    assert re.search(
        r"^20 edits, the test failing alike after each, ok true +40 +2 +16 ", loops, re.MULTILINE
    )
    assert len(re.findall(r"^\S.*?(?: +(?:\d+|-)){7}$", honest, re.MULTILINE)) == 11  # calls, 6 rules
    assert re.search(r"^a search re-run after each of 12 new findings +24 +- ", honest, re.MULTILINE)
    assert re.search(
        r"^the same, the files read numbered module_0 to module_11 +24 +19 ", honest, re.MULTILINE
    )
    assert re.search(r"^a passing test re-run after each of 30 edits +60 +- ", honest, re.MULTILINE)
    assert re.search(r"^the same, the edit a 'sed -i' command printing nothing +60 +- ", honest, re.MULTILINE)
    assert re.search(r"^30 new queries answered 'Error: ...', ok true +30 +1 +11 ", loops, re.MULTILINE)
    assert re.search(r"^the same, answered '\{\"error\": ...\}' +30 +1 +11 ", loops, re.MULTILINE)
    assert re.search(r"^the error logs of 20 services, one after another +20 +- ", honest, re.MULTILINE)
    assert re.search(r"^20 tickets closed one by one, each 'Ticket updated.' +20 +- ", honest, re.MULTILINE)
    assert re.search(r"^a search paged past its last page, 20 'No results.' +20 +2 +10 ", loops, re.MULTILINE)
    assert re.search(
        r"^a status polled 20 times, only its Unix time changing +20 +1 +6 ", loops, re.MULTILINE
    )


def test_detection_eval_scores_each_corpus_and_leaves_one_out(runs: dict[str, Future[str]]) -> None:
    """Given a folder of corpora (as ``../shared/corpus``): one table per corpus, the total and
    leave-one-corpus-out; given one corpus folder, its single-corpus table."""
    output = printed(runs, "detection_eval")
    assert "4 runs in 2 corpora" in output
    assert figures(output, "default: Guard()")[:2] == [1, 1]  # corpus a: 1/1 caught
    assert "leave-one-corpus-out: limits chosen on the other corpora, scored on the one held out" in output
    single = printed(runs, "detection_eval_one")
    assert "| default: Guard()                             |    1/1 |" in single


def test_detection_frontier_reproduces_the_default(runs: dict[str, Future[str]]) -> None:
    output = printed(runs, "detection_frontier")
    assert "reproduces Guard() on every run: True" in output
