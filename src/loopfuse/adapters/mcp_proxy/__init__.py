"""``loopfuse proxy``: any MCP server behind a guard, for any MCP client.

The stdio-to-stdio relay (``relay``) needs only the standard library; fronting or
serving streamable HTTP (``http``) uses FastMCP's proxy with ``LoopfuseMiddleware``
and needs ``pip install 'loopfuse[mcp]'``.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ..._process import process_number
from ...guard import Guard

__all__ = ["ProxyOptions", "run_proxy"]


@dataclass(frozen=True)
class ProxyOptions:
    """What to front (``command`` or ``url``) and how to serve it (stdio, or ``listen``)."""

    command: Sequence[str] = ()
    url: str | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    listen: tuple[str, int] | None = None


def run_proxy(options: ProxyOptions, guard: Guard) -> int:
    """Serve until the client leaves; the exit status (non-zero when the backend died)."""
    if options.url is None and options.listen is None:
        return asyncio.run(_run_stdio(options, guard))
    from .http import run_fastmcp_proxy

    return run_fastmcp_proxy(options, guard)


async def _run_stdio(options: ProxyOptions, guard: Guard) -> int:
    from .backend import Backend
    from .relay import StdioRelay
    from .streams import open_stdio

    try:
        backend = await Backend.start(options.command, options.env)
    except OSError as exc:
        print(f"loopfuse proxy: cannot start {options.command[0]!r}: {exc.strerror}", file=sys.stderr)
        return 127 if isinstance(exc, FileNotFoundError) else 126
    client_in, client_out = await open_stdio()
    # each session's agent: f"{name}:{n}"; a container's proxy may run as pid 1 in every one
    name = f"proxy:{backend.name}:{os.getpid()}-{process_number():016x}"
    return await StdioRelay(guard, name, backend, client_in, client_out).run()
