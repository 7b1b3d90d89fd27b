"""``loopfuse proxy`` and a 2026-07-28 call that takes several rounds: the backend's tool asks
the client to retry with the state it gives, and the client sends the same ``tools/call`` again
until the last round answers. That is one call, however many rounds it takes."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from fastmcp import Client
from fastmcp.client.transports import StdioTransport

from .conftest import HERE, TIMEOUT, RawSession, child_env


async def test_a_call_of_many_rounds_is_one_call(proxy_argv: list[str]) -> None:
    transport = StdioTransport(sys.executable, proxy_argv, env=child_env(), keep_alive=False)
    async with Client(transport, timeout=TIMEOUT, init_timeout=TIMEOUT) as client:
        await client.list_tools()
        result = await client.call_tool("build_report", {"name": "q3", "rounds": 10}, raise_on_error=False)

    assert not result.is_error
    assert result.content[0].text == "report q3 ready after 10 rounds"


@pytest.mark.parametrize(
    "no_round", [{"requestState": None}, {"inputResponses": {}}, {"inputResponses": None}]
)
def test_a_call_with_an_empty_round_field_is_checked(tmp_path: Path, no_round: dict[str, Any]) -> None:
    """A null ``requestState`` or ``inputResponses``, or no responses at all, is no later round:
    the call is checked (it went through unchecked, so a loop sending it was never refused)."""
    config = tmp_path / "loopfuse.toml"
    config.write_text("[circuit_breaker]\nduplicate_limit = 2\nresult_limit = 2\n")
    argv = ["-m", "loopfuse.cli", "proxy", "--config", str(config), "--", sys.executable]
    session = RawSession([*argv, str(HERE / "raw_server.py")], child_env())
    try:
        params = {"name": "echo", "arguments": {"text": "same"}, **no_round}
        refused = [session.request("tools/call", params)["result"].get("isError") for _ in range(3)]
        assert refused == [False, False, True]
        assert session.close() == 0
    finally:
        session.kill()
