"""A connection lost after Redis ran a round trip but before its reply arrived: the store sends
it again on a new connection (its one retry), and Redis answers it without running it twice."""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterator
from typing import Any

import pytest
import redis

from loopfuse import Guard
from tests.store_fixtures import RedisServer, unique_prefix


class ReplyDropper:
    """A TCP proxy to a redis-server that, once armed, lets the next script run on Redis and then
    closes the client's connection instead of passing the reply on."""

    def __init__(self, server: RedisServer) -> None:
        self.upstream = ("127.0.0.1", server.port)
        self.armed = False
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"redis://127.0.0.1:{self.listener.getsockname()[1]}/0"
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._pipe, args=(client,), daemon=True).start()

    def _pipe(self, client: socket.socket) -> None:
        """Both directions pumped; the reply to an armed script closes the client instead."""
        up = socket.create_connection(self.upstream)
        dropping = threading.Event()
        threading.Thread(target=self._replies, args=(up, client, dropping), daemon=True).start()
        with client, up, contextlib.suppress(OSError):
            while data := client.recv(1 << 20):
                if self.armed and (b"FCALL" in data or b"EVALSHA" in data):
                    self.armed = False
                    dropping.set()
                up.sendall(data)

    @staticmethod
    def _replies(up: socket.socket, client: socket.socket, dropping: threading.Event) -> None:
        with contextlib.suppress(OSError):
            while data := up.recv(1 << 20):
                if dropping.is_set():  # Redis ran the script; its reply never arrives
                    client.shutdown(socket.SHUT_RDWR)
                    return
                client.sendall(data)

    def close(self) -> None:
        self.listener.close()


@pytest.fixture
def dropper(own_redis: RedisServer) -> Iterator[ReplyDropper]:
    proxy = ReplyDropper(own_redis)
    yield proxy
    proxy.close()


def guard_via(dropper: ReplyDropper, functions: bool) -> Guard:
    store = {"url": dropper.url, "prefix": unique_prefix(), "redis_functions": functions}
    return Guard.from_config({"duplicate": {"limit": 2}, "store": store})


def calls_counted(server: RedisServer, guard: Guard, agent: str) -> Any:
    prefix = guard.config.store.prefix
    return redis.Redis.from_url(server.url).hget(f"{prefix}{{{agent}}}:s", "calls")


@pytest.mark.parametrize("functions", [True, False], ids=["FCALL", "EVALSHA"])
def test_a_check_whose_reply_was_lost_counts_once(
    own_redis: RedisServer, dropper: ReplyDropper, functions: bool
) -> None:
    guard = guard_via(dropper, functions)
    guard.check("warm", {}, "other")  # the scripts are loaded
    dropper.armed = True
    decisions = [guard.check("fetch", {"u": 1}, "a") for _ in range(2)]
    assert [d.allowed for d in decisions] == [True, True]  # as in process: the third is the one denied
    assert not guard.check("fetch", {"u": 1}, "a").allowed
    assert calls_counted(own_redis, guard, "a") == b"2"
    assert guard.stats()["fail_open"] == {}
    guard.close()


@pytest.mark.parametrize("functions", [True, False], ids=["FCALL", "EVALSHA"])
async def test_an_async_check_whose_reply_was_lost_counts_once(
    own_redis: RedisServer, dropper: ReplyDropper, functions: bool
) -> None:
    guard = guard_via(dropper, functions)
    await guard.acheck("warm", {}, "other")
    dropper.armed = True
    decisions = [await guard.acheck("fetch", {"u": 1}, "a") for _ in range(2)]
    assert [d.allowed for d in decisions] == [True, True]
    assert calls_counted(own_redis, guard, "a") == b"2"
    assert guard.stats()["fail_open"] == {}
    await guard.aclose()
