"""Redis Cluster: every key of an agent in one hash slot, so each script runs on one node.

A one-node cluster (all 16384 slots on one redis-server) enforces the same rule as a larger
one: a script whose keys hash to different slots fails with CROSSSLOT.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from loopfuse import Guard
from loopfuse.stores.redis import RedisStore
from tests.store_fixtures import RedisServer, require_redis_server

redis_cluster = pytest.importorskip("redis.cluster")
redis_async_cluster = pytest.importorskip("redis.asyncio.cluster")
pytestmark = pytest.mark.redis  # each test starts its own one-node cluster


@pytest.fixture
def cluster_node(tmp_path: Path) -> Iterator[RedisServer]:
    require_redis_server()
    extra = ("--cluster-enabled", "yes", "--cluster-config-file", str(tmp_path / "nodes.conf"))
    server = RedisServer(tmp_path, extra)
    server.port = _port_with_free_bus()
    server.start()
    client = server.client()
    client.execute_command("CLUSTER", "ADDSLOTSRANGE", 0, 16383)
    deadline = time.monotonic() + 10
    while b"cluster_state:ok" not in client.execute_command("CLUSTER", "INFO"):
        assert time.monotonic() < deadline, "the one-node cluster did not come up"
        time.sleep(0.05)
    yield server
    server.stop()


def _port_with_free_bus() -> int:
    """A free port whose cluster bus port (+10000) is free and valid too."""
    for _ in range(100):
        with socket.socket() as a, socket.socket() as b:
            a.bind(("127.0.0.1", 0))
            port = int(a.getsockname()[1])
            if port + 10000 > 65535:
                continue
            try:
                b.bind(("127.0.0.1", port + 10000))
            except OSError:
                continue
            return port
    raise RuntimeError("no free port pair for a cluster node")


def _guard(node: RedisServer) -> tuple[Guard, Any, Any]:
    """A guard over the host's own clients (the host closes them: the store does not)."""
    client = redis_cluster.RedisCluster(host="127.0.0.1", port=node.port)
    aclient = redis_async_cluster.RedisCluster(host="127.0.0.1", port=node.port)
    return Guard(store=RedisStore.from_client(client, aclient)), client, aclient


def test_every_breaker_runs_on_a_cluster_and_forget_clears_the_slot(cluster_node: RedisServer) -> None:
    guard, client, _ = _guard(cluster_node)
    same = []
    for _ in range(7):
        d = guard.check("goto", {"line": 72}, "run-1")
        if d.allowed:
            guard.record_result("goto", {"line": 72}, "the same screen", "run-1")
        same.append(d.kind)
    assert same == [None] * 5 + ["duplicate"] * 2  # same result 5 times in a row
    for i in range(9):  # the first call comes before any result: near duplicates count from the 2nd
        args = {"q": f"item {i}"}
        assert guard.check("search", args, "run-2").allowed
        guard.record_result("search", args, "nothing found", "run-2")
    assert guard.check("search", {"q": "item 99"}, "run-2").kind == "near_duplicate"
    assert guard.stats()["fail_open"] == {} and guard.stats()["agents"] == 2
    guard.forget("run-2")
    assert {k.split(b"}")[0] for k in client.keys("*")} == {b"loopfuse:{run-1"}
    guard.close()
    client.close()


async def test_async_checks_on_a_cluster(cluster_node: RedisServer) -> None:
    guard, client, aclient = _guard(cluster_node)
    kinds = [(await guard.acheck("bash", {"command": "ls"}, "run-3")).kind for _ in range(8)]
    assert kinds == [None] * 6 + ["duplicate"] * 2
    await guard.aclose()
    await aclient.aclose()
    client.close()
