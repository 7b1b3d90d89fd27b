"""Latency of a trivial MCP tool call as a user's client sees it: the official MCP Python SDK
client (``mcp.Client`` over stdio), direct to a stdio server and through ``loopfuse proxy``.

Two servers: the FastMCP test server (tests/mcp/backend_server.py, tool ``echo``) and a
minimal standard-library JSON-RPC server that answers at once, which isolates what the
proxy adds. The proxy runs the default guard (an empty configuration file), results
reported. Every call has distinct arguments, so the guard checks and allows each one.
Direct and proxied calls alternate in blocks of ``--block`` calls, so that both see the
same machine (on a shared machine the load changes from one second to the next).

    PYTHONPATH=src python bench/mcp_proxy.py [--calls 3000] [--block 10] [--mode auto|legacy]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from contextlib import AsyncExitStack
from pathlib import Path

from mcp.client.stdio import StdioServerParameters

from mcp import Client

ROOT = Path(__file__).resolve().parents[1]
FASTMCP_BACKEND = ROOT / "tests" / "mcp" / "backend_server.py"
MINIMAL_BACKEND = """\
import json, sys
TOOL = {"name": "echo", "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}}}
INIT = {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
        "serverInfo": {"name": "minimal", "version": "0"}}
for line in sys.stdin:
    msg = json.loads(line)
    if "id" not in msg:
        continue
    answer = {"jsonrpc": "2.0", "id": msg["id"]}
    if msg["method"] == "tools/call":
        text = msg["params"]["arguments"]["text"]
        answer["result"] = {"content": [{"type": "text", "text": text}], "isError": False}
    elif msg["method"] == "tools/list":
        answer["result"] = {"tools": [TOOL]}
    elif msg["method"] == "initialize":
        answer["result"] = INIT
    else:
        answer["error"] = {"code": -32601, "message": "Method not found"}
    sys.stdout.write(json.dumps(answer) + "\\n")
    sys.stdout.flush()
"""


def _server(argv: list[str]) -> StdioServerParameters:
    path = os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])
    return StdioServerParameters(command=argv[0], args=argv[1:], env={**os.environ, "PYTHONPATH": path})


async def timed_calls(client: Client, calls: int, tag: str) -> list[float]:
    samples = []
    for i in range(calls):
        start = time.perf_counter()
        result = await client.call_tool("echo", {"text": f"{tag}-{i}"})
        samples.append(time.perf_counter() - start)
        assert not result.is_error, result
    return samples


async def measure(backend: list[str], config: Path, opts: argparse.Namespace) -> dict[str, list[float]]:
    proxy = [sys.executable, "-m", "loopfuse.cli", "proxy", "--config", str(config), "--", *backend]
    samples: dict[str, list[float]] = {"direct": [], "proxy": []}
    async with AsyncExitStack() as stack:
        clients = {
            name: await stack.enter_async_context(Client(_server(argv), mode=opts.mode))
            for name, argv in (("direct", backend), ("proxy", proxy))
        }
        for name, client in clients.items():
            await timed_calls(client, min(200, opts.calls), f"warm-{name}")
        for block in range(opts.calls // opts.block):
            for name, client in clients.items():
                samples[name] += await timed_calls(client, opts.block, f"{name}-{block}")
    return samples


def p99(values: list[float]) -> float:
    return statistics.quantiles(values, n=100)[98]


def report(label: str, samples: dict[str, list[float]]) -> None:
    direct, proxied = samples["direct"], samples["proxy"]
    rows = {
        "median": (statistics.median(direct), statistics.median(proxied)),
        "p99": (p99(direct), p99(proxied)),
    }
    print(f"{label} ({len(direct)} calls each, official MCP Python SDK client over stdio)")
    print(f"  {'':<7} {'direct (ms)':>12} {'proxy (ms)':>11} {'added (ms)':>11} {'ratio':>6}")
    for name, (d, p) in rows.items():
        print(f"  {name:<7} {d * 1e3:>12.3f} {p * 1e3:>11.3f} {(p - d) * 1e3:>11.3f} {p / d:>6.2f}")


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=3000, help="timed calls on each side")
    parser.add_argument("--block", type=int, default=10, help="calls in a row on one side")
    parser.add_argument("--mode", default="auto", help="the client's protocol negotiation: auto or legacy")
    opts = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        config = Path(tmp) / "loopfuse.toml"
        config.write_text("")  # the default guard
        minimal = Path(tmp) / "minimal_backend.py"
        minimal.write_text(MINIMAL_BACKEND)
        for label, backend in (
            ("minimal stdlib server", [sys.executable, str(minimal)]),
            ("FastMCP server", [sys.executable, str(FASTMCP_BACKEND)]),
        ):
            report(label, await measure(backend, config, opts))


if __name__ == "__main__":
    asyncio.run(main())
