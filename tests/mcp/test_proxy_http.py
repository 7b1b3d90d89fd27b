"""``loopfuse proxy --url`` (an HTTP backend) and ``--listen`` (the proxy serves HTTP)."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastmcp import Client
from fastmcp.client.transports import StdioTransport

from .conftest import BACKEND, TIMEOUT, child_env


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _wait_for_port(port: int, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        assert proc.poll() is None, "the server exited before listening"
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.1)
    raise AssertionError(f"nothing listens on port {port}")


def _serve(argv: list[str], port: int, **env: str) -> Iterator[None]:
    proc = subprocess.Popen(argv, env=child_env(**env), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        _wait_for_port(port, proc)
        yield
    finally:
        proc.terminate()
        try:
            proc.wait(TIMEOUT)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(TIMEOUT)


@pytest.fixture
def http_backend(side_file: Path) -> Iterator[str]:
    port = _free_port()
    argv = [sys.executable, BACKEND, "--http", str(port)]
    yield from (f"http://127.0.0.1:{port}/mcp" for _ in _serve(argv, port, SIDE_EFFECT_FILE=str(side_file)))


async def _three_identical_calls(client: Client) -> list[bool]:
    async with client:
        return [
            (await client.call_tool("append", {"text": "a"}, raise_on_error=False)).is_error for _ in range(3)
        ]


async def test_url_fronts_an_http_backend(http_backend: str, side_file: Path, tmp_path: Path) -> None:
    config = tmp_path / "loopfuse.toml"
    config.write_text("[circuit_breaker]\nduplicate_limit = 2\nresult_limit = 2\n")
    argv = ["-m", "loopfuse.cli", "proxy", "--config", str(config), "--url", http_backend]
    transport = StdioTransport(sys.executable, argv, env=child_env(), keep_alive=False)
    client = Client(transport, timeout=TIMEOUT, init_timeout=TIMEOUT)
    assert await _three_identical_calls(client) == [False, False, True]
    assert side_file.read_text() == "a\na\n"


async def test_listen_serves_http_with_one_scope_per_session(side_file: Path, tmp_path: Path) -> None:
    config = tmp_path / "loopfuse.toml"
    config.write_text("[circuit_breaker]\nduplicate_limit = 2\nresult_limit = 2\n")
    port = _free_port()
    argv = [sys.executable, "-m", "loopfuse.cli", "proxy", "--config", str(config), "--listen", str(port)]
    argv += ["--env", f"SIDE_EFFECT_FILE={side_file}", "--", sys.executable, BACKEND]
    for _ in _serve(argv, port):
        url = f"http://127.0.0.1:{port}/mcp"
        for _session in range(2):
            client = Client(url, mode="legacy", timeout=TIMEOUT, init_timeout=TIMEOUT)
            assert await _three_identical_calls(client) == [False, False, True]
    assert side_file.read_text() == "a\n" * 4
