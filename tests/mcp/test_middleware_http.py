"""``LoopfuseMiddleware`` on a FastMCP server over streamable HTTP, stateful and stateless."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastmcp import Client
from fastmcp.client.transports import StreamableHttpTransport

from .conftest import TIMEOUT
from .test_proxy_http import _free_port, _serve

pytestmark = pytest.mark.slow  # each test starts an HTTP server

SERVER = str(Path(__file__).with_name("guarded_http_server.py"))


@pytest.fixture(params=["stateful", "stateless"])
def server_url(request: pytest.FixtureRequest) -> Iterator[str]:
    port = _free_port()
    yield from (
        f"http://127.0.0.1:{port}/mcp"
        for _ in _serve([sys.executable, SERVER, str(port), request.param], port)
    )


async def test_a_handshake_client_repeating_a_call_is_refused(server_url: str) -> None:
    """Stateless, FastMCP makes up a session id for each request: the guard counts by the
    process there, as for any client without a session, not by a new agent per request."""
    async with Client(StreamableHttpTransport(server_url), mode="legacy", timeout=TIMEOUT) as client:
        results = [await client.call_tool("search", {"query": "q"}, raise_on_error=False) for _ in range(4)]

    assert [r.is_error for r in results] == [False, False, True, True]
