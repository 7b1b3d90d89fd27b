"""Eight processes hammering one agent in Redis: exactly as many calls run as the breakers allow."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.store_fixtures import RedisServer, unique_prefix

HAMMER = Path(__file__).with_name("hammer.py")
PROCESSES = 8

SCENARIOS = [
    # (config, rounds, distinct pages, calls that may run in all)
    # one call, 8 x 25 times: the window lets it run duplicate_limit times in all
    ({"circuit_breaker": {"duplicate_limit": 6, "max_calls_per_agent": 0}}, 25, 1, 6),
    # 8 x 3 rounds over 20 pages (480 checks): the cap lets 50 run
    ({"circuit_breaker": {"duplicate_limit": 6, "max_calls_per_agent": 50}}, 3, 20, 50),
    # 8 x 2 rounds over 10 pages: each page runs duplicate_limit = 4 times
    ({"circuit_breaker": {"duplicate_limit": 4, "max_calls_per_agent": 0}}, 2, 10, 40),
    # the loop brake alone: the same call runs max_repeats times in a row across processes
    ({"circuit_breaker": {"enabled": False}, "loop_brake": {"max_repeats": 3}}, 20, 1, 3),
]


def start_workers(server: RedisServer, scenarios: list[dict[str, Any]]) -> list[subprocess.Popen[str]]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    argv = [sys.executable, str(HAMMER), server.url, json.dumps(scenarios)]
    popen = subprocess.Popen
    return [
        popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
        for _ in range(PROCESSES)
    ]


@pytest.mark.slow
def test_executions_match_the_limits(redis_server: RedisServer) -> None:
    scenarios = [
        {"prefix": unique_prefix(), "config": c, "rounds": r, "distinct": d} for c, r, d, _ in SCENARIOS
    ]
    procs = start_workers(redis_server, scenarios)
    try:
        for proc in procs:
            assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        for proc in procs:
            assert proc.stdin is not None
            proc.stdin.write("go\n")
            proc.stdin.flush()
        results = [json.loads(proc.communicate(timeout=60)[0]) for proc in procs]
    finally:
        for proc in procs:
            proc.kill()
            proc.wait(timeout=5)
    for i, (_, rounds, distinct, allowed) in enumerate(SCENARIOS):
        per_process = [r[i] for r in results]
        assert sum(r["ran"] for r in per_process) == allowed
        assert all(r["fail_open"] == {} and r["checks"] == rounds * distinct for r in per_process)
