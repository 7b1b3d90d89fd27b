"""A small MCP server for the tests and the benchmark, run as a subprocess.

``append`` appends a line to ``$SIDE_EFFECT_FILE`` so a test can count how often its
body ran. ``python backend_server.py [--http PORT]`` serves stdio, or HTTP on 127.0.0.1.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

import mcp_types
from fastmcp import Context, FastMCP

server = FastMCP("loopfuse-test-backend")


@server.tool
def append(text: str) -> str:
    """Append a line to the side-effect file."""
    with open(os.environ["SIDE_EFFECT_FILE"], "a", encoding="utf-8") as f:
        f.write(text + "\n")
    return f"appended {len(text)} characters"


@server.tool
def echo(text: str) -> str:
    """Return the text."""
    return text


@server.tool
def pid() -> int:
    """The server's process id."""
    return os.getpid()


@server.tool
def sleep(seconds: float) -> str:
    """Sleep, then answer."""
    time.sleep(seconds)
    return "slept"


@server.tool
def fail() -> str:
    """Always raises."""
    raise RuntimeError("this tool always fails")


@server.tool
async def work(steps: int, ctx: Context) -> str:
    """Report progress and log a message while working."""
    for step in range(steps):
        await ctx.report_progress(step + 1, steps)
    await ctx.info("work finished")
    return "done"


@server.tool
def build_report(name: str, rounds: int, ctx: Context) -> str | mcp_types.InputRequiredResult:
    """Take ``rounds`` rounds: ask the client to retry (2026-07-28) until the last one answers."""
    done = int(ctx.request_state or "0") + 1
    if done < rounds:
        return mcp_types.InputRequiredResult(request_state=str(done))
    return f"report {name} ready after {done} rounds"


@server.tool
async def add_tool(name: str, ctx: Context) -> str:
    """Add a tool ``name`` (it answers "extra ran") and tell the client the list changed."""
    server.tool(_extra, name=name)
    await ctx.send_notification(mcp_types.ToolListChangedNotification())
    return "added"


def _extra() -> str:
    return "extra ran"


@server.resource("data://greeting")
def greeting() -> str:
    """A fixed text."""
    return "hello from the backend"


@server.prompt
def review(topic: str) -> str:
    """A prompt with one argument."""
    return f"Please review {topic}."


def _on_sigterm(signum: int, frame: Any) -> None:
    marker = os.environ.get("SIGNAL_MARKER_FILE")
    if marker:
        Path(marker).write_text(signal.Signals(signum).name)
    print("backend got a signal, exiting", file=sys.stderr, flush=True)
    os._exit(0)


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, _on_sigterm)
    print("backend starting", file=sys.stderr, flush=True)
    if len(sys.argv) == 3 and sys.argv[1] == "--http":
        server.run(transport="http", host="127.0.0.1", port=int(sys.argv[2]), show_banner=False)
    else:
        server.run(show_banner=False)
