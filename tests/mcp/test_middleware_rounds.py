"""``LoopfuseMiddleware`` and the MCP features that answer a call with something other than its
final result: a 2026-07-28 tool that asks the client for input (or to retry later) before it
finishes, and a server extension that answers ``tools/call`` itself (the tasks extension)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import mcp_types
from fastmcp import Client, Context, FastMCP
from fastmcp.server.extensions import ServerExtension

from loopfuse import Guard
from loopfuse.adapters.mcp import LoopfuseMiddleware
from loopfuse.adapters.mcp_proxy.http_middleware import ProxyMiddleware

from .conftest import TIMEOUT, RawSession, child_env

LEGS = 8


def polling_server(
    guard: Guard, legs: list[int], middleware: type[LoopfuseMiddleware] = LoopfuseMiddleware
) -> FastMCP:
    """A tool that asks the client to retry 7 times (``request_state``), then answers."""
    server = FastMCP("polling")

    @server.tool
    def build_report(name: str, ctx: Context) -> str | mcp_types.InputRequiredResult:
        leg = int(ctx.request_state or "0")
        legs.append(leg)
        if leg + 1 < LEGS:
            return mcp_types.InputRequiredResult(request_state=str(leg + 1))
        return f"report {name} ready"

    server.add_middleware(middleware(guard))
    return server


async def test_a_call_retried_for_its_next_round_is_one_call() -> None:
    legs: list[int] = []
    guard = Guard()
    async with Client(polling_server(guard, legs), timeout=TIMEOUT) as client:
        result = await client.call_tool("build_report", {"name": "q3"}, raise_on_error=False)

    assert not result.is_error and result.content[0].text == "report q3 ready"
    assert legs == list(range(LEGS))
    assert guard.stats()["checks"] == 1


async def test_the_proxys_middleware_checks_a_call_at_its_first_round_only() -> None:
    """``loopfuse proxy --url``/``--listen`` checked each round as a new call: a call asking to
    be retried 7 times was the 8th identical call, refused."""
    legs: list[int] = []
    guard = Guard()
    async with Client(polling_server(guard, legs, ProxyMiddleware), timeout=TIMEOUT) as client:
        result = await client.call_tool("build_report", {"name": "q3"}, raise_on_error=False)

    assert not result.is_error and result.content[0].text == "report q3 ready"
    assert guard.stats()["checks"] == 1


async def test_a_warning_waits_for_the_calls_final_round() -> None:
    legs: list[int] = []
    guard = Guard.from_config({"circuit_breaker": {"warn_at": 1}})
    async with Client(polling_server(guard, legs), timeout=TIMEOUT) as client:
        results = [
            await client.call_tool("build_report", {"name": "q3"}, raise_on_error=False) for _ in range(2)
        ]

    assert legs == list(range(LEGS)) * 2
    texts = [[getattr(block, "text", "") for block in result.content] for result in results]
    assert texts[0] == ["report q3 ready"]
    assert texts[1][0] == "report q3 ready" and texts[1][1].startswith(
        "[loopfuse warning: this build_report call"
    )


GUARDED_STDIO_SERVER = """\
from fastmcp import FastMCP
from loopfuse import Guard
from loopfuse.adapters.mcp import LoopfuseMiddleware
from loopfuse.adapters.mcp_proxy.http_middleware import ProxyMiddleware

server = FastMCP("guarded")


@server.tool
def search(query: str) -> str:
    return "results for " + query


guard = Guard.from_config({"circuit_breaker": {"duplicate_limit": 2, "result_limit": 2}})
server.add_middleware(LoopfuseMiddleware(guard))
server.run(show_banner=False)
"""


def test_a_call_with_empty_input_responses_is_checked(tmp_path: Path) -> None:
    """``inputResponses: {}`` answers nothing a tool asked: no later round, so the call is
    checked (it went through unchecked, as the stdio proxy now agrees)."""
    script = tmp_path / "guarded.py"
    script.write_text(GUARDED_STDIO_SERVER)
    session = RawSession([str(script)], child_env())
    try:
        session.initialize()
        params = {"name": "search", "arguments": {"query": "q"}, "inputResponses": {}}
        refused = [session.request("tools/call", params)["result"]["isError"] for _ in range(3)]
        assert refused == [False, False, True]
    finally:
        session.kill()


class AnsweringTasks(ServerExtension):
    """Answers every call with a task to poll, as the tasks extension does."""

    identifier = "io.example/tasks"

    async def intercept_tool_call(self, params: Any, context: Any, call_next: Any) -> Any:
        now = datetime.now(UTC).isoformat()
        task = mcp_types.Task(task_id="t1", status="working", created_at=now, last_updated_at=now, ttl=60000)
        return mcp_types.CreateTaskResult(task=task)


async def test_a_call_an_extension_answers_itself_is_passed_through_unchanged() -> None:
    answers = []
    for guard in (None, Guard()):
        server = FastMCP("tasks")

        @server.tool
        async def long_job(n: int) -> str:
            return "done"

        server.add_extension(AnsweringTasks())
        if guard is not None:
            server.add_middleware(LoopfuseMiddleware(guard))
        async with Client(server, mode="legacy", timeout=TIMEOUT) as client:
            try:
                answers.append(repr(await client.session.call_tool("long_job", {"n": 1})))
            except Exception as error:  # this stand-in's task is not what a plain call may answer
                answers.append(f"{type(error).__name__}: {error}")

    assert answers[1] == answers[0]
