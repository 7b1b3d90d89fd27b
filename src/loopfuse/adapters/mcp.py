"""Guard middleware for FastMCP servers: ``server.add_middleware(LoopfuseMiddleware(guard))``.

A denied call answers with an error tool result (``isError``) carrying the denial
text; the tool never runs. An allowed call's warning is one more text content block at the
end of its result. The MCP protocol has no model turn: calls are checked without ``round=``. The scope is the MCP session, or the server process
where the protocol has no session (2026-07-28 stdio, unauthenticated HTTP, a stateless HTTP server).

A 2026-07-28 call that takes several rounds (the tool asks the client for input, or to retry
with a state it gives) is one call: checked at its first round, its result (and warning) at
its last. A call a server extension answers itself (a task to poll) passes through unrecorded.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

try:
    import mcp_types
    from fastmcp.server.middleware import CallNext, Middleware, MiddlewareContext
    from fastmcp.tools.base import InputRequiredToolResult, ToolResult
except ImportError as exc:  # pragma: no cover - exercised without the extra
    raise ImportError(
        "loopfuse.adapters.mcp needs FastMCP and the MCP SDK: pip install 'loopfuse[mcp]'"
    ) from exc

from .._calls import canonical_json
from .._process import process_number
from ..incidents import logger
from ._common import PendingWarnings
from .mcp_proxy.refusal import refusal_text

if TYPE_CHECKING:
    from ..guard import Guard

__all__ = ["PROCESS_SCOPE", "LoopfuseMiddleware", "process_scope", "refusal_text", "warned"]

PROCESS_SCOPE = "mcp:process"  # the scope of a client without a session: this name, the process's number


def process_scope() -> str:
    """This process's scope, ``mcp:process:<its random number>``: its own on a shared store."""
    return f"{PROCESS_SCOPE}:{process_number():016x}"


class LoopfuseMiddleware(Middleware):
    """Checks every ``tools/call`` with ``guard`` before the tool runs.

    After a call ran, ``guard.arecord_result`` learns its result (``ok`` is false for
    an error result or a raised error). Once the guard escalates, the denial text is
    the ``LoopAbortedError`` text: a server cannot stop its client's run, so it keeps
    refusing and says the agent is stuck.
    """

    def __init__(self, guard: Guard) -> None:
        self.guard = guard
        self._warnings = PendingWarnings()  # of calls whose result comes at a later round

    async def on_call_tool(
        self,
        context: MiddlewareContext[mcp_types.CallToolRequestParams],
        call_next: CallNext[mcp_types.CallToolRequestParams, ToolResult],
    ) -> ToolResult:
        tool, args = context.message.name, context.message.arguments or {}
        agent = session_scope(context.fastmcp_context)
        if _next_round(context.message):  # the same call, checked at its first round
            return await self._run(
                context, call_next, agent, self._warnings.pop(_round_key(agent, tool, args))
            )
        decision = await self.guard.acheck(tool, args, agent)
        text = refusal_text(decision, agent, self.guard)
        if text is not None:
            return ToolResult(content=text, is_error=True)
        return await self._run(context, call_next, agent, decision.warning)

    async def _run(
        self,
        context: MiddlewareContext[mcp_types.CallToolRequestParams],
        call_next: CallNext[mcp_types.CallToolRequestParams, ToolResult],
        agent: str,
        warning: str | None = None,
    ) -> ToolResult:
        """The allowed call run, what it returned (or raised) reported, and its warning added."""
        tool, args = context.message.name, context.message.arguments or {}
        try:
            result = await call_next(context)
        except Exception as exc:  # reported by its type and message, as the other adapters do
            await self._record(tool, args, exc, agent, ok=False)
            raise
        if not isinstance(result, ToolResult):  # answered by an extension (a task to poll): no result yet
            return result
        if isinstance(result, InputRequiredToolResult):  # a round: the result comes at the last one
            self._warnings.put(_round_key(agent, tool, args), warning)
            return result
        await self._record(tool, args, _content(result.content), agent, ok=not result.is_error)
        return result if warning is None else warned(result, warning)

    async def _record(self, tool: str, args: Any, result: Any, agent: str, *, ok: bool) -> None:
        try:
            await self.guard.arecord_result(tool, args, result, agent, ok=ok)
        except Exception:
            logger.exception("loopfuse: record_result failed for %s", tool)


def warned(result: ToolResult, warning: str) -> ToolResult:
    """``result`` with one more text content block: the warning (structured content unchanged)."""
    block = mcp_types.TextContent(type="text", text=warning)
    return ToolResult(
        content=[*result.content, block],
        structured_content=result.structured_content,
        meta=result.meta,
        is_error=result.is_error,
    )


def _next_round(params: Any) -> bool:
    """Whether a ``tools/call`` is a later round of a 2026-07-28 call: the client answering the
    tool's request for input (not empty: a tool asks something), or retrying with the state it
    was given. No round, so checked: neither, or an empty ``inputResponses`` alone."""
    return (
        bool(getattr(params, "input_responses", None)) or getattr(params, "request_state", None) is not None
    )


def _round_key(agent: str, tool: str, args: Any) -> tuple[str, str, str]:
    try:
        return agent, tool, canonical_json(args)
    except Exception:  # arguments that cannot be written: their rounds get no warning
        return agent, tool, ""


def _content(blocks: Any) -> Any:
    """The result's content blocks as plain data (pydantic models cannot be digested)."""
    if not isinstance(blocks, list):
        return blocks
    return [b.model_dump(mode="json") if hasattr(b, "model_dump") else b for b in blocks]


def session_scope(ctx: Any) -> str:
    """The agent id of the request's MCP session; the process when there is no session."""
    scope_key = getattr(ctx, "_session_scope_key", None)
    if not callable(scope_key):
        return process_scope()
    try:
        key = scope_key()
    except Exception:
        return process_scope()
    if not isinstance(key, str) or key == "process" or _sessionless_http(ctx, key):
        return process_scope()
    return f"mcp:{key}"


def _sessionless_http(ctx: Any, key: str) -> bool:
    """Whether ``key`` is an id FastMCP made up for one request: a handshake-era HTTP request
    with no ``mcp-session-id`` (a stateless server), which FastMCP gives a new id each time."""
    if key.startswith("user:"):  # an authenticated client: its identity, not a session's
        return False
    try:
        if getattr(ctx, "transport", None) != "streamable-http":
            return False
        request = ctx.request_context.request
        return request is not None and request.headers.get("mcp-session-id") is None
    except Exception:  # FastMCP's objects: cannot tell, so the id stands
        return False
