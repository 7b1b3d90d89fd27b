"""Long sessions through ``loopfuse proxy`` over stdio, with a real FastMCP client and backend:
one agent per MCP session, no lifetime cap unless one is set (``--max-calls``), and calls of
tools the server did not list reported as invalid turns."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import mcp_types
import pytest
from fastmcp import Client
from fastmcp.client.client import CallToolResult
from fastmcp.client.transports import StdioTransport

from .conftest import BACKEND, TIMEOUT, child_env

pytestmark = pytest.mark.slow  # each test runs long client sessions through a proxy subprocess

INVALID_DENIAL = "no usable tool call (invalid limit {limit})"


def _argv(tmp_path: Path, config: str, *options: str, **env: str) -> list[str]:
    path = tmp_path / "loopfuse.toml"
    path.write_text(config)
    argv = ["-m", "loopfuse.cli", "proxy", "--config", str(path), *options]
    argv += [arg for key, value in env.items() for arg in ("--env", f"{key}={value}")]
    return [*argv, "--", sys.executable, BACKEND]


def _client(argv: list[str], mode: str = "auto", *, keep_alive: bool = False) -> Client[StdioTransport]:
    transport = StdioTransport(sys.executable, argv, env=child_env(), keep_alive=keep_alive)
    return Client(transport, mode=mode, timeout=TIMEOUT, init_timeout=TIMEOUT)


async def _distinct_echoes(client: Client[StdioTransport], calls: int) -> list[CallToolResult]:
    return [await client.call_tool("echo", {"text": f"n{i}"}, raise_on_error=False) for i in range(calls)]


async def _initialize_again(client: Client[StdioTransport]) -> None:
    """The handshake once more on the same connection, as a client that starts over sends it."""
    info = mcp_types.Implementation(name="restarting-client", version="0")
    params = mcp_types.InitializeRequestParams(
        protocol_version="2025-06-18", capabilities=mcp_types.ClientCapabilities(), client_info=info
    )
    await client.session.send_request(mcp_types.InitializeRequest(params=params), mcp_types.InitializeResult)
    await client.session.send_notification(mcp_types.InitializedNotification())


def _text(result: CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, mcp_types.TextContent)
    return block.text


async def test_a_long_session_has_no_call_cap_by_default(tmp_path: Path) -> None:
    async with _client(_argv(tmp_path, "")) as client:
        results = await _distinct_echoes(client, 320)
    assert [r for r in results if r.is_error] == []
    assert _text(results[-1]) == "n319"


@pytest.mark.parametrize(
    ("config", "options", "cap"),
    [
        ("", ("--max-calls", "5"), 5),
        ("[circuit_breaker]\nmax_calls_per_agent = 4\n", (), 4),
        ("[circuit_breaker]\nmax_calls_per_agent = 4\n", ("--max-calls", "5"), 5),
        ("[cap]\nlimit = 3\n", (), 3),
    ],
    ids=["--max-calls", "configuration file", "--max-calls over the file", "[cap] limit"],
)
async def test_a_cap_that_is_set_refuses_the_next_call_with_the_caps_text(
    tmp_path: Path, config: str, options: tuple[str, ...], cap: int
) -> None:
    async with _client(_argv(tmp_path, config, *options)) as client:
        results = await _distinct_echoes(client, cap + 2)
    assert [r.is_error for r in results] == [False] * cap + [True, True]
    expected = f"this agent has made {cap} tool calls, the most allowed (max_calls_per_agent {cap})"
    assert expected in _text(results[cap])


async def test_max_calls_0_turns_off_the_cap_of_the_configuration_file(tmp_path: Path) -> None:
    argv = _argv(tmp_path, "[circuit_breaker]\nmax_calls_per_agent = 2\n", "--max-calls", "0")
    async with _client(argv) as client:
        results = await _distinct_echoes(client, 5)
    assert [r.is_error for r in results] == [False] * 5


async def test_each_initialize_starts_a_fresh_agent(tmp_path: Path, side_file: Path) -> None:
    log = tmp_path / "incidents.jsonl"
    config = "[circuit_breaker]\nduplicate_limit = 3\nresult_limit = 3\n"
    argv = _argv(tmp_path, config, "--incident-log", str(log), SIDE_EFFECT_FILE=str(side_file))
    runs = []
    async with _client(argv, "legacy") as client:
        for session in range(2):
            if session:
                await _initialize_again(client)
            calls = [await client.call_tool("append", {"text": "a"}, raise_on_error=False) for _ in range(4)]
            runs.append([r.is_error for r in calls])
    assert runs == [[False, False, False, True]] * 2
    assert side_file.read_text() == "a\n" * 6
    agents = [json.loads(line)["agent"] for line in log.read_text().splitlines()]
    assert [a.rsplit(":", 1)[1] for a in agents] == ["1", "2"]
    assert agents[0].startswith("proxy:python") and agents[0].rsplit(":", 1)[0] == agents[1].rsplit(":", 1)[0]


async def test_a_call_of_an_unlisted_tool_is_an_invalid_turn(tmp_path: Path) -> None:
    async with _client([BACKEND]) as direct:
        server_error = await direct.call_tool("nope", {}, raise_on_error=False)
    async with _client(_argv(tmp_path, "[invalid]\nlimit = 2\n")) as client:
        await client.list_tools()
        first, second = [await client.call_tool("nope", {}, raise_on_error=False) for _ in range(2)]
    assert first.is_error and first.content == server_error.content  # the server's error, unchanged
    assert second.is_error and INVALID_DENIAL.format(limit=2) in _text(second)


async def test_before_the_client_lists_the_tools_nothing_is_judged(tmp_path: Path) -> None:
    async with _client(_argv(tmp_path, "[invalid]\nlimit = 1\n")) as client:
        results = [await client.call_tool("nope", {}, raise_on_error=False) for _ in range(3)]
    assert [_text(r) for r in results] == ["Unknown tool: 'nope'"] * 3


async def test_a_call_of_a_listed_tool_ends_the_streak(tmp_path: Path) -> None:
    async with _client(_argv(tmp_path, "[invalid]\nlimit = 2\n")) as client:
        await client.list_tools()
        results = []
        for _ in range(3):
            results.append(await client.call_tool("nope", {}, raise_on_error=False))
            await client.call_tool("echo", {"text": "work"})
    assert [_text(r) for r in results] == ["Unknown tool: 'nope'"] * 3


async def test_a_changed_tool_list_is_not_judged_until_it_is_listed_again(tmp_path: Path) -> None:
    async with _client(_argv(tmp_path, "[invalid]\nlimit = 1\n")) as client:
        await client.list_tools()
        await client.call_tool("add_tool", {"name": "extra"})  # the server says its list changed
        unjudged = await client.call_tool("nope", {}, raise_on_error=False)
        added = await client.call_tool("extra", {}, raise_on_error=False)  # the client lists again
        judged = await client.call_tool("nope", {}, raise_on_error=False)
    assert _text(unjudged) == "Unknown tool: 'nope'"
    assert _text(added) == "extra ran"
    assert INVALID_DENIAL.format(limit=1) in _text(judged)


def _pid_namespaces() -> bool:
    """Whether this machine lets us start a process as pid 1 of its own namespace (root)."""
    try:
        done = subprocess.run(["unshare", "--pid", "--fork", "true"], capture_output=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


@pytest.mark.skipif(not _pid_namespaces(), reason="needs unshare --pid (root)")
async def test_two_proxies_with_one_pid_count_apart_on_one_redis(tmp_path: Path, redis_url: str) -> None:
    """Each container's proxy may run as pid 1: its agent was proxy:python:1:1 in every one, so
    on one Redis a proxy's loop stopped the next proxy's first call."""
    config = f'[store]\nurl = "{redis_url}"\n\n[circuit_breaker]\nduplicate_limit = 3\nresult_limit = 3\n'
    argv = [sys.executable, *_argv(tmp_path, config)]
    refused = []
    for calls in (5, 1):
        transport = StdioTransport("unshare", ["--pid", "--fork", "--kill-child", *argv], env=child_env())
        async with Client(transport, timeout=TIMEOUT, init_timeout=TIMEOUT) as client:
            results = [
                await client.call_tool("echo", {"text": "a"}, raise_on_error=False) for _ in range(calls)
            ]
        refused.append([r.is_error for r in results])
    assert refused == [[False] * 3 + [True] * 2, [False]]
