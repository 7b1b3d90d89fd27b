"""``LoopfuseMiddleware`` on an in-process FastMCP server, with FastMCP's in-memory client."""

from __future__ import annotations

import pytest
from fastmcp import Client, FastMCP

from loopfuse import Guard
from loopfuse.adapters.mcp import LoopfuseMiddleware
from tests.store_fixtures import processes_output

from .conftest import TIMEOUT


def _server(guard: Guard, runs: list[str]) -> FastMCP:
    server = FastMCP("guarded")

    @server.tool
    def search(query: str) -> str:
        runs.append(query)
        return f"results for {query}"  # the same call returns the same result: no progress

    @server.tool
    def broken() -> str:
        raise RuntimeError("backend unavailable")

    @server.tool
    def lookup(key: str) -> str:
        runs.append(key)
        return "Error: service unavailable"  # a failure answered as text: FastMCP calls it a success

    server.add_middleware(LoopfuseMiddleware(guard))
    return server


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_identical_calls_are_denied_with_an_error_result_and_the_tool_does_not_run(mode: str) -> None:
    runs: list[str] = []
    guard = Guard.from_config({"circuit_breaker": {"duplicate_limit": 2, "result_limit": 2}})
    async with Client(_server(guard, runs), mode=mode, timeout=TIMEOUT) as client:
        results = [await client.call_tool("search", {"query": "q"}, raise_on_error=False) for _ in range(4)]
        different = await client.call_tool("search", {"query": "other"}, raise_on_error=False)
    assert [r.is_error for r in results] == [False, False, True, True]
    assert results[2].content[0].text.startswith("loopfuse refused this search call")
    assert not different.is_error
    assert runs == ["q", "q", "other"]


async def test_a_tool_answering_the_same_error_as_text_is_stopped() -> None:
    runs: list[str] = []
    async with Client(_server(Guard(), runs), timeout=TIMEOUT) as client:
        keys = [f"key {chr(97 + i)}" for i in range(12)]  # new keys, not equal but for numbers
        results = [await client.call_tool("lookup", {"key": key}, raise_on_error=False) for key in keys]
    assert [r.is_error for r in results] == [False] * 10 + [True, True]
    assert "same error 10 times" in results[10].content[0].text
    assert runs == keys[:10]


async def test_each_handshake_session_is_its_own_scope() -> None:
    runs: list[str] = []
    server = _server(Guard.from_config({"circuit_breaker": {"duplicate_limit": 1, "result_limit": 1}}), runs)
    for _ in range(2):
        async with Client(server, mode="legacy", timeout=TIMEOUT) as client:
            first = await client.call_tool("search", {"query": "q"}, raise_on_error=False)
            second = await client.call_tool("search", {"query": "q"}, raise_on_error=False)
        assert (first.is_error, second.is_error) == (False, True)
    assert runs == ["q", "q"]


async def test_after_escalation_every_denial_says_the_agent_is_stuck() -> None:
    guard = Guard.from_config(
        {"circuit_breaker": {"duplicate_limit": 1, "result_limit": 1}, "guard": {"abort_after_denials": 2}}
    )
    async with Client(_server(guard, []), timeout=TIMEOUT) as client:
        results = [await client.call_tool("search", {"query": "q"}, raise_on_error=False) for _ in range(4)]
    texts = [r.content[0].text for r in results[1:]]
    assert "refused this search call" in texts[0]
    assert all("stuck in a loop" in text and "Stop calling tools" in text for text in texts[1:])


async def test_a_tool_error_passes_through_unchanged() -> None:
    guard = Guard.from_config({"circuit_breaker": {"duplicate_limit": 5, "result_limit": 5}})
    async with Client(_server(guard, []), timeout=TIMEOUT) as client:
        result = await client.call_tool("broken", {}, raise_on_error=False)
    assert result.is_error and "backend unavailable" in result.content[0].text


async def test_results_reach_the_guard_so_new_results_count_as_progress() -> None:
    guard = Guard.from_config({"circuit_breaker": {"duplicate_limit": 2}})
    server = FastMCP("counter")
    calls: list[int] = []

    @server.tool
    def poll() -> str:
        calls.append(1)
        return f"{len(calls)} new items"  # a new result every time: progress, not a loop

    server.add_middleware(LoopfuseMiddleware(guard))
    async with Client(server, timeout=TIMEOUT) as client:
        results = [await client.call_tool("poll", {}, raise_on_error=False) for _ in range(4)]
    assert [r.is_error for r in results] == [False] * 4
    assert guard.stats()["fail_open"] == {}


async def test_a_raised_error_reaches_the_guard_by_its_type_and_message() -> None:
    """Different failures are not the same error: each one is new, so all of them run."""
    guard = Guard()
    server = FastMCP("flaky")
    errors = [ConnectionError("connection refused"), PermissionError("access denied"), KeyError("column"),
              ValueError("bad checksum"), OSError("disk full"), TimeoutError("read timed out")]  # fmt: skip

    @server.tool
    def fetch() -> str:
        raise errors.pop(0)

    server.add_middleware(LoopfuseMiddleware(guard))
    async with Client(server, timeout=TIMEOUT) as client:
        results = [await client.call_tool("fetch", {}, raise_on_error=False) for _ in range(6)]
    assert not any("loopfuse" in r.content[0].text for r in results)
    assert errors == []  # the tool ran every time


_ONE_SERVER_PROCESS = """
import asyncio, sys
from fastmcp import Client
from loopfuse import Guard
from tests.mcp.test_middleware import _server

async def main(calls: int) -> None:
    runs: list[str] = []
    async with Client(_server(Guard(store=sys.argv[1]), runs)) as client:  # no session: the process
        for _ in range(calls):
            await client.call_tool("search", {"query": "q"}, raise_on_error=False)
    print("searches", len(runs))

asyncio.run(main(int(sys.argv[2])))
"""


def test_two_server_processes_without_sessions_count_apart_on_one_redis(redis_url: str) -> None:
    """The sessionless scope was "mcp:process" in every process: on one Redis, a process's 8
    calls stopped the first call of the next."""
    outputs = processes_output(_ONE_SERVER_PROCESS, (redis_url, "8"), (redis_url, "1"))
    assert outputs == ["searches 5\n", "searches 1\n"]
