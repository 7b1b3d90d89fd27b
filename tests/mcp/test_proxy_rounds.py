"""``loopfuse proxy`` and a 2026-07-28 call that takes several rounds: the backend's tool asks
the client to retry with the state it gives, and the client sends the same ``tools/call`` again
until the last round answers. That is one call, however many rounds it takes."""

from __future__ import annotations

import sys

from fastmcp import Client
from fastmcp.client.transports import StdioTransport

from .conftest import TIMEOUT, child_env


async def test_a_call_of_many_rounds_is_one_call(proxy_argv: list[str]) -> None:
    transport = StdioTransport(sys.executable, proxy_argv, env=child_env(), keep_alive=False)
    async with Client(transport, timeout=TIMEOUT, init_timeout=TIMEOUT) as client:
        await client.list_tools()
        result = await client.call_tool("build_report", {"name": "q3", "rounds": 10}, raise_on_error=False)

    assert not result.is_error
    assert result.content[0].text == "report q3 ready after 10 rounds"
