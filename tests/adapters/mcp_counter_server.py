"""A stdio MCP server with one tool, ``search``, that appends a line to $COUNTER_FILE per run."""

import os

from fastmcp import FastMCP

server = FastMCP("counter")


@server.tool
def search(q: str) -> str:
    """Search."""
    with open(os.environ["COUNTER_FILE"], "a") as out:
        out.write("run\n")
    return "result"


if __name__ == "__main__":
    server.run(show_banner=False)
