"""A FastMCP server guarded by ``LoopfuseMiddleware``, over streamable HTTP (argv: port,
``stateless`` or ``stateful``); the guard refuses the third identical call of an agent."""

from __future__ import annotations

import sys

from fastmcp import FastMCP

from loopfuse import Guard
from loopfuse.adapters.mcp import LoopfuseMiddleware

server = FastMCP("guarded-http")


@server.tool
def search(query: str) -> str:
    return f"results for {query}"


guard = Guard.from_config({"circuit_breaker": {"duplicate_limit": 2, "result_limit": 2}})
server.add_middleware(LoopfuseMiddleware(guard))

if __name__ == "__main__":
    port, mode = int(sys.argv[1]), sys.argv[2]
    server.run(
        transport="http", host="127.0.0.1", port=port, stateless_http=mode == "stateless", show_banner=False
    )
