"""MCP: a warning reaches the client as one more text block of the tool's result, from the
FastMCP middleware, the stdio proxy and the HTTP proxy (real FastMCP clients and servers)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TypeVar

import pytest
from fastmcp import Client
from fastmcp.client.transports import ClientTransport, StdioTransport

from loopfuse import Guard

from .conftest import BACKEND, TIMEOUT, child_env
from .test_middleware import _server
from .test_proxy_http import http_backend  # noqa: F401  (a fixture)

WARN = "[circuit_breaker]\nwarn_at = 2\n"
NOTICE = "[loopfuse warning: this {} call ran"
Transport = TypeVar("Transport", bound=ClientTransport)


def texts(result: object) -> list[str]:
    return [block.text for block in result.content]  # type: ignore[attr-defined]


async def three_calls(client: Client[Transport], tool: str, args: dict[str, str]) -> list[list[str]]:
    async with client:
        return [texts(await client.call_tool(tool, args, raise_on_error=False)) for _ in range(3)]


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_middleware_adds_the_warning_as_a_last_text_block(mode: str) -> None:
    runs: list[str] = []
    server = _server(Guard.from_config({"circuit_breaker": {"warn_at": 2}}), runs)
    seen = await three_calls(Client(server, mode=mode, timeout=TIMEOUT), "search", {"query": "q"})
    assert runs == ["q"] * 3
    assert seen[:2] == [["results for q"]] * 2
    assert seen[2][0] == "results for q" and seen[2][1].startswith(NOTICE.format("search"))


def proxy(tmp_path: Path, side_file: Path, *backend: str) -> Client[StdioTransport]:
    config = tmp_path / "loopfuse.toml"
    config.write_text(WARN)
    argv = ["-m", "loopfuse.cli", "proxy", "--config", str(config), *backend]
    env = child_env(SIDE_EFFECT_FILE=str(side_file))
    transport = StdioTransport(sys.executable, argv, env=env, keep_alive=False)
    return Client(transport, timeout=TIMEOUT, init_timeout=TIMEOUT)


def assert_warned_on_the_third(seen: list[list[str]], side_file: Path) -> None:
    assert side_file.read_text() == "a\n" * 3  # every call ran
    assert seen[0] == seen[1] and len(seen[0]) == 1
    assert seen[2][:-1] == seen[0] and seen[2][-1].startswith(NOTICE.format("append"))


async def test_stdio_proxy_adds_the_warning_to_the_backends_answer(tmp_path: Path, side_file: Path) -> None:
    client = proxy(tmp_path, side_file, "--", sys.executable, BACKEND)
    assert_warned_on_the_third(await three_calls(client, "append", {"text": "a"}), side_file)


async def test_http_proxy_adds_the_warning_to_the_backends_answer(
    tmp_path: Path,
    side_file: Path,
    http_backend: str,  # noqa: F811
) -> None:
    client = proxy(tmp_path, side_file, "--url", http_backend)
    assert_warned_on_the_third(await three_calls(client, "append", {"text": "a"}), side_file)
