"""The store table every guard-level timeline runs on (``ALL_STORES``), the fixtures that build
guards on it, and a real redis-server per test session (and per fault test), on a free port
in a temp dir. tests/conftest.py makes the fixtures available to every test folder."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from loopfuse import Guard

REDIS_SERVER = shutil.which("redis-server")


def processes_output(script: str, *argvs: tuple[str, ...]) -> list[str]:
    """What ``python -c script ARGV`` prints for each ARGV, one process after another (this
    checkout's source and tests importable): what processes sharing one Redis see in turn."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(Path(__file__).parents[1]), *sys.path]))
    return [
        subprocess.run(
            [sys.executable, "-c", script, *argv],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
            check=True,
        ).stdout
        for argv in argvs
    ]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class RedisServer:
    """One redis-server process without persistence; ``stop``/``start`` keep the same port."""

    def __init__(self, directory: Path, extra: tuple[str, ...] = ()) -> None:
        self.dir = directory
        self.extra = extra
        self.port = _free_port()
        self.socket = str(directory / "redis.sock")
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    @property
    def unix_url(self) -> str:
        return f"unix://{self.socket}?db=0"

    def start(self) -> None:
        assert REDIS_SERVER is not None
        args = [
            REDIS_SERVER,
            "--port",
            str(self.port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            str(self.dir),
            "--unixsocket",
            self.socket,
            *self.extra,
        ]
        log = open(self.dir / "redis.log", "ab")  # noqa: SIM115 - owned by the process
        self.proc = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT)
        log.close()
        self._wait_ready()

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2) as s:
                    s.sendall(b"PING\r\n")
                    if s.recv(16).startswith(b"+PONG"):
                        return
            except OSError:
                time.sleep(0.02)
        self.stop()
        raise RuntimeError(f"redis-server did not start on port {self.port}")

    def stop(self) -> None:
        if self.proc is None:
            return
        self.resume()
        self.proc.terminate()
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=5)
        self.proc = None

    def pause(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        if self.proc is not None:
            self.proc.send_signal(signal.SIGCONT)

    def client(self) -> Any:
        import redis

        return redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=2)

    def sent(self, command: str) -> int:
        """How many times clients sent ``command`` to the server (``INFO commandstats``)."""
        with self.client() as client:
            stats = client.info("commandstats")
        return int(stats.get(f"cmdstat_{command.lower()}", {}).get("calls", 0))


def require_redis_server() -> None:
    if REDIS_SERVER is None:
        if os.environ.get("CI"):
            pytest.fail("redis-server is not installed (CI is set, so this is a failure)")
        pytest.skip("redis-server is not installed")


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    """Shared by the behaviour tests; each test isolates itself with its own key prefix."""
    require_redis_server()
    server = RedisServer(tmp_path_factory.mktemp("redis"))
    server.start()
    yield server
    server.stop()


@pytest.fixture
def own_redis(tmp_path: Path) -> Iterator[RedisServer]:
    """A server of the test's own, for tests that stop or pause it."""
    require_redis_server()
    server = RedisServer(tmp_path)
    server.start()
    yield server
    server.stop()


class LoopTicks:
    """Counts the 10 ms sleeps a background task completes: it rises only while the event loop
    runs, so a call that blocks the loop leaves it where it was."""

    def __init__(self) -> None:
        self.count = 0
        self._task = asyncio.get_running_loop().create_task(self._tick())

    async def _tick(self) -> None:
        while True:
            await asyncio.sleep(0.01)
            self.count += 1

    def stop(self) -> int:
        self._task.cancel()
        return self.count


def unique_prefix() -> str:
    return f"t{uuid.uuid4().hex[:12]}:"


GuardFactory = Callable[..., Guard]

ALL_STORES = ["memory", "redis"]  # the one store table: every guard-level timeline runs on each
STORE_PARAMETERS = ("make_guard", "store_kind", "store_url")  # the fixtures parametrized with it
REDIS_FIXTURES = frozenset({"redis_server", "own_redis", "redis_url"})


@pytest.fixture(params=ALL_STORES)
def make_guard(request: pytest.FixtureRequest) -> Iterator[GuardFactory]:
    """Guards from a config mapping, on the store the test is parametrized with."""
    guards: list[Guard] = []
    kind = request.param
    url = "memory://" if kind == "memory" else request.getfixturevalue("redis_server").url
    prefix = unique_prefix()

    def make(mapping: dict[str, Any] | None = None, **kwargs: Any) -> Guard:
        mapping = dict(mapping or {})
        mapping.setdefault("store", {}).update({"url": url, "prefix": prefix})
        guard = Guard.from_config(mapping, **kwargs)
        guards.append(guard)
        return guard

    make.kind = kind  # type: ignore[attr-defined]
    yield make
    for guard in guards:
        guard.close()


@pytest.fixture(params=ALL_STORES)
def store_kind(request: pytest.FixtureRequest) -> tuple[str, RedisServer | None]:
    """The store a test runs on, with the server when it is Redis."""
    kind = request.param
    return kind, request.getfixturevalue("redis_server") if kind == "redis" else None


@pytest.fixture
def redis_url(redis_server: RedisServer) -> str:
    return redis_server.url


@pytest.fixture(params=ALL_STORES)
def store_url(request: pytest.FixtureRequest) -> str:
    """``memory://``, or the shared redis-server (a test isolates itself with ``store_prefix``)."""
    if request.param == "memory":
        return "memory://"
    return str(request.getfixturevalue("redis_url"))


@pytest.fixture
def store_prefix() -> str:
    return unique_prefix()
