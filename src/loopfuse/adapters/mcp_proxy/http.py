"""Streamable HTTP on either side: FastMCP's proxy with ``ProxyMiddleware``.

Used for ``--url`` (an HTTP backend) and ``--listen`` (serve HTTP). The agent is the
client's MCP session, else its connection (see ``http_middleware``).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

try:
    from fastmcp.client.transports import StdioTransport, StreamableHttpTransport
    from fastmcp.server import create_proxy
except ImportError as exc:  # pragma: no cover - exercised without the extra
    raise ImportError("loopfuse proxy --url/--listen needs FastMCP: pip install 'loopfuse[mcp]'") from exc

from .http_middleware import ProxyMiddleware

if TYPE_CHECKING:
    from ...guard import Guard
    from . import ProxyOptions

__all__ = ["run_fastmcp_proxy"]


def run_fastmcp_proxy(options: ProxyOptions, guard: Guard) -> int:
    """Serve the guarded proxy until it is stopped; 0 when it ended normally."""
    proxy = create_proxy(_backend(options), name="loopfuse proxy")
    proxy.add_middleware(ProxyMiddleware(guard))
    if options.listen is None:
        proxy.run(transport="stdio", show_banner=False)
    else:
        host, port = options.listen
        proxy.run(transport="http", host=host, port=port, show_banner=False)
    return 0


def _backend(options: ProxyOptions) -> Any:
    if options.url is not None:
        return StreamableHttpTransport(options.url)
    command = list(options.command)
    env = {**os.environ, **options.env}
    return StdioTransport(command[0], command[1:], env=env, keep_alive=True)
