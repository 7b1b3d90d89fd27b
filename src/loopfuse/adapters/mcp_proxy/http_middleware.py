"""The guard in the FastMCP proxy (``--url``, ``--listen``): one agent per client, and calls
of tools the backend does not list reported as invalid turns.

The agent is the MCP session (``mcp:<Mcp-Session-Id>``; ``mcp:user:...`` for an
authenticated 2026-07-28 client). A 2026-07-28 client over HTTP without authentication
has no session: its agent is the client, its host and its ``User-Agent`` header,
``mcp:client:<host>:<digest>``. Not its connection: a client idle for 5 s (a model's turn)
comes back on a new one. Over stdio without a session the process serves one client:
``mcp:process:<the process's random number>`` (``process_scope``).
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any

import mcp_types
from fastmcp.server.dependencies import get_http_request
from fastmcp.server.middleware import CallNext, MiddlewareContext
from fastmcp.tools.base import ToolResult

from ...incidents import logger
from ..mcp import LoopfuseMiddleware, _next_round, _round_key, process_scope, session_scope
from .refusal import refusal_text

if TYPE_CHECKING:
    from ...decision import Decision

__all__ = ["ProxyMiddleware", "client_scope"]


class ProxyMiddleware(LoopfuseMiddleware):
    """``LoopfuseMiddleware`` with the proxy's agent per client and its unlisted-tool rule."""

    async def on_call_tool(
        self,
        context: MiddlewareContext[mcp_types.CallToolRequestParams],
        call_next: CallNext[mcp_types.CallToolRequestParams, ToolResult],
    ) -> ToolResult:
        tool, args = context.message.name, context.message.arguments or {}
        agent = client_scope(context.fastmcp_context)
        if _next_round(context.message):  # the same call, checked at its first round
            return await self._run(
                context, call_next, agent, self._warnings.pop(_round_key(agent, tool, args))
            )
        listed = not await _unlisted(context.fastmcp_context, tool)
        decision = await self._decide(tool, args, agent, listed)
        text = refusal_text(decision, agent, self.guard)
        if text is not None:
            return ToolResult(content=text, is_error=True)
        if not listed:
            return await call_next(context)  # the server's own error, unchanged
        return await self._run(context, call_next, agent, decision.warning)

    async def _decide(self, tool: str, args: Any, agent: str, listed: bool) -> Decision:
        """A listed tool's call goes to the breakers; an unlisted one is an invalid turn."""
        if listed:
            return await self.guard.acheck(tool, args, agent)
        return await self.guard.anote_invalid(agent, reason="a tool the MCP server did not list")


def client_scope(ctx: Any) -> str:
    """The agent of the request's client (see the module's text)."""
    scope = session_scope(ctx)
    if scope != process_scope():
        return scope
    try:
        request = get_http_request()
        peer, agent = request.client, request.headers.get("user-agent", "")
    except Exception:  # not over HTTP: one client per process
        return scope
    if peer is None:
        return scope
    return f"mcp:client:{peer.host}:{hashlib.sha256(agent.encode()).hexdigest()[:8]}"


async def _unlisted(ctx: Any, tool: str) -> bool:
    """Whether the backend's tool list (as FastMCP's proxy fetched it) lacks ``tool``;
    False when that cannot be told: an empty list is an upstream FastMCP could not reach (it
    answers with no tools), not a model calling tools that do not exist."""
    try:
        if await ctx.fastmcp.get_tool(tool) is not None:
            return False
        return bool(await ctx.fastmcp.list_tools(run_middleware=False))
    except Exception:
        logger.debug("loopfuse proxy: cannot tell whether %s is listed", tool, exc_info=True)
        return False
