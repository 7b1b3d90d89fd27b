"""A stdio MCP server whose tools append a line to $COUNTER_FILE per run: ``search``, and
``lookup``, which answers its failure as text (no ``isError``)."""

import os

from fastmcp import FastMCP

server = FastMCP("counter")


@server.tool
def search(q: str) -> str:
    """Search."""
    with open(os.environ["COUNTER_FILE"], "a") as out:
        out.write("run\n")
    return "result"


@server.tool
def lookup(key: str) -> str:
    """Look up."""
    with open(os.environ["COUNTER_FILE"], "a") as out:
        out.write("run\n")
    return "Error: service unavailable"


if __name__ == "__main__":
    server.run(show_banner=False)
