"""``loopfuse proxy --url`` (an HTTP backend) and ``--listen`` (the proxy serves HTTP)."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TypeVar

import pytest
from fastmcp import Client
from fastmcp.client.transports import ClientTransport, StdioTransport

from .conftest import BACKEND, TIMEOUT, child_env

pytestmark = pytest.mark.slow  # each test starts HTTP proxies and backends

Transport = TypeVar("Transport", bound=ClientTransport)


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


async def _three_identical_calls(client: Client[Transport]) -> list[bool]:
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


def _listen(tmp_path: Path, side_file: Path, config: str) -> tuple[list[str], int]:
    path = tmp_path / "loopfuse.toml"
    path.write_text(config)
    port = _free_port()
    argv = [sys.executable, "-m", "loopfuse.cli", "proxy", "--config", str(path), "--listen", str(port)]
    argv += ["--env", f"SIDE_EFFECT_FILE={side_file}", "--", sys.executable, BACKEND]
    return argv, port


@pytest.mark.parametrize(("mode", "second"), [("legacy", [False, False, True]), ("auto", [True, True, True])])
async def test_listen_counts_per_session_or_per_client(
    side_file: Path, tmp_path: Path, mode: str, second: list[bool]
) -> None:
    """Handshake-era clients have an Mcp-Session-Id; 2026-07-28 clients without auth have
    none: a client counts as its host and User-Agent, whatever connection a call comes on (per
    connection, a client idle past the 5 s keep-alive, as between a model's turns, came back
    on a new one, a new agent: its loop was never refused)."""
    argv, port = _listen(tmp_path, side_file, "[circuit_breaker]\nduplicate_limit = 2\nresult_limit = 2\n")
    url = f"http://127.0.0.1:{port}/mcp"
    for _ in _serve(argv, port):
        results = []
        for _client in range(2):  # the second: the same client, back on a new connection
            client = Client(url, mode=mode, timeout=TIMEOUT, init_timeout=TIMEOUT)
            results.append(await _three_identical_calls(client))
    assert results == [[False, False, True], second]
    assert side_file.read_text() == "a\n" * (4 if mode == "legacy" else 2)


async def test_listen_reports_calls_of_unknown_tools_as_invalid_turns(
    side_file: Path, tmp_path: Path
) -> None:
    argv, port = _listen(tmp_path, side_file, "[invalid]\nlimit = 2\n")
    url = f"http://127.0.0.1:{port}/mcp"
    for _ in _serve(argv, port):
        async with Client(url, timeout=TIMEOUT, init_timeout=TIMEOUT) as client:
            first, second = [await client.call_tool("nope", {}, raise_on_error=False) for _ in range(2)]
            after_work = [
                await client.call_tool(name, {"text": "x"}, raise_on_error=False) for name in ("echo", "nope")
            ]
    assert first.is_error and first.content[0].text == "Unknown tool: 'nope'"
    assert second.is_error and "no usable tool call (invalid limit 2)" in second.content[0].text
    assert [r.content[0].text for r in after_work] == ["x", "Unknown tool: 'nope'"]


async def test_url_with_its_upstream_down_blames_no_invalid_turn_on_the_model() -> None:
    """FastMCP lists no tool when it cannot reach the upstream, so every call read as a call of
    a tool the server did not list: from the 6th the model was told its replies held no usable
    tool call, then the run was stopped as a loop."""
    argv = ["-m", "loopfuse.cli", "proxy", "--url", f"http://127.0.0.1:{_free_port()}/mcp"]
    transport = StdioTransport(sys.executable, argv, env=child_env(), keep_alive=False)
    async with Client(transport, timeout=TIMEOUT, init_timeout=TIMEOUT) as client:
        words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"]
        results = [await client.call_tool("search", {"q": word}, raise_on_error=False) for word in words]
    texts = [getattr(r.content[0], "text", "") if r.content else "" for r in results]
    assert all(r.is_error for r in results)
    assert not any("no usable tool call" in t or "loopfuse" in t for t in texts), texts
