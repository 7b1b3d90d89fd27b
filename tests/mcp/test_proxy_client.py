"""``loopfuse proxy`` between a real FastMCP client and a real FastMCP backend, over stdio."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from fastmcp import Client
from fastmcp.client.transports import StdioTransport

from .conftest import BACKEND, TIMEOUT, child_env

pytestmark = pytest.mark.parametrize("mode", ["auto", "legacy"])


def _client(argv: list[str], mode: str, **kwargs: object) -> Client[StdioTransport]:
    transport = StdioTransport(sys.executable, argv, env=child_env(), keep_alive=False)
    return Client(transport, mode=mode, timeout=TIMEOUT, init_timeout=TIMEOUT, **kwargs)


def _direct(side_file: Path, mode: str) -> Client[StdioTransport]:
    env = child_env(SIDE_EFFECT_FILE=str(side_file))
    transport = StdioTransport(sys.executable, [BACKEND], env=env, keep_alive=False)
    return Client(transport, mode=mode, timeout=TIMEOUT, init_timeout=TIMEOUT)


@pytest.mark.slow
async def test_tools_resources_and_prompts_are_the_backends(
    proxy_argv: list[str], side_file: Path, mode: str
) -> None:
    async with _direct(side_file, mode) as direct:
        tools, resources = await direct.list_tools(), await direct.list_resources()
        prompts = await direct.list_prompts()
    async with _client(proxy_argv, mode) as proxied:
        assert await proxied.list_tools() == tools
        assert await proxied.list_resources() == resources
        assert await proxied.list_prompts() == prompts
        contents = await proxied.read_resource("data://greeting")
        prompt = await proxied.get_prompt("review", {"topic": "the patch"})
    assert contents[0].text == "hello from the backend"
    assert prompt.messages[0].content.text == "Please review the patch."


async def test_identical_calls_are_denied_at_the_limit_and_the_body_stops_running(
    proxy_argv: list[str], side_file: Path, incident_log: Path, mode: str
) -> None:
    async with _client(proxy_argv, mode) as client:
        results = [
            await client.call_tool("append", {"text": "s3cret"}, raise_on_error=False) for _ in range(5)
        ]
        other = await client.call_tool("append", {"text": "other"}, raise_on_error=False)
    assert [r.is_error for r in results] == [False, False, False, True, True]
    denial = results[3].content[0].text
    assert denial.startswith("loopfuse refused this append call")
    assert "limit 3" in denial and "s3cret" not in denial
    assert not other.is_error
    assert side_file.read_text().splitlines() == ["s3cret"] * 3 + ["other"]
    records = [json.loads(line) for line in incident_log.read_text().splitlines()]
    assert [(r["kind"], r["tool"], r["count"], r["limit"]) for r in records] == [
        ("duplicate", "append", 3, 3)
    ]
    assert "s3cret" not in incident_log.read_text()


async def test_progress_and_log_notifications_pass_through(proxy_argv: list[str], mode: str) -> None:
    progress: list[tuple[float, float | None]] = []
    logs: list[str] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append((value, total))

    async def on_log(message: object) -> None:
        logs.append(str(getattr(message, "data", message)))

    async with _client(proxy_argv, mode, log_handler=on_log) as client:
        result = await client.call_tool("work", {"steps": 3}, progress_handler=on_progress)
    assert result.data == "done"
    assert progress == [(1, 3), (2, 3), (3, 3)]
    assert any("work finished" in text for text in logs)


async def test_a_failing_tool_stays_an_error_result(proxy_argv: list[str], mode: str) -> None:
    async with _client(proxy_argv, mode) as client:
        result = await client.call_tool("fail", {}, raise_on_error=False)
    assert result.is_error
    assert "always fails" in result.content[0].text
