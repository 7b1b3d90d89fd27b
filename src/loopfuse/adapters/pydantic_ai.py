"""Pydantic AI (v2): the guard as a capability. Needs ``pip install 'loopfuse[pydantic-ai]'``.

``Agent(model, capabilities=[LoopfuseCapability(guard)])``. Its ``before_tool_execute`` hook
checks each call; a denied call does not run and the model gets the denial text as a
failed tool result (``ToolFailed``: flagged as an error, it spends no retry budget, unlike
``ModelRetry``). Once the guard escalates, the hook raises ``LoopAbortedError``, which
ends the run: ``agent.run`` raises it.

Scope: the run id (``RunContext.run_id``), so a sub-agent run inside a tool has its own
state. The run's state goes when the run ends, normally, by an error or cancelled
(``wrap_run``). Parallel tool calls of one turn are checked in the order Pydantic AI starts them;
the guard's lock keeps counts exact.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

try:
    from pydantic_ai import RunContext
    from pydantic_ai.capabilities import AbstractCapability
    from pydantic_ai.capabilities.abstract import WrapRunHandler
    from pydantic_ai.exceptions import ToolFailed
    from pydantic_ai.messages import ToolCallPart
    from pydantic_ai.run import AgentRunResult
    from pydantic_ai.tools import ToolDefinition
except ImportError as exc:  # pragma: no cover - exercised in a subprocess test
    raise ImportError(
        "loopfuse.adapters.pydantic_ai needs Pydantic AI v2: pip install 'loopfuse[pydantic-ai]'"
    ) from exc

from ..guard import Guard
from ._common import abort_error

__all__ = ["LoopfuseCapability"]


@dataclass
class LoopfuseCapability(AbstractCapability[Any]):
    """Deny looping tool calls; stop the run once the agent ignores the denials."""

    guard: Guard

    async def wrap_run(self, ctx: RunContext[Any], *, handler: WrapRunHandler) -> AgentRunResult[Any]:
        try:
            return await handler()
        finally:
            self.guard.forget(_scope(ctx))

    async def before_tool_execute(
        self, ctx: RunContext[Any], *, call: ToolCallPart, tool_def: ToolDefinition, args: dict[str, Any]
    ) -> dict[str, Any]:
        scope = _scope(ctx)
        decision = await self.guard.acheck(call.tool_name, args, scope)
        if decision.allowed:
            return args
        if decision.escalate:
            raise abort_error(self.guard, decision, scope)
        raise ToolFailed(decision.message or "")

    async def after_tool_execute(
        self,
        ctx: RunContext[Any],
        *,
        call: ToolCallPart,
        tool_def: ToolDefinition,
        args: dict[str, Any],
        result: Any,
    ) -> Any:
        await self.guard.arecord_result(call.tool_name, args, result, _scope(ctx), ok=True)
        return result

    async def on_tool_execute_error(
        self,
        ctx: RunContext[Any],
        *,
        call: ToolCallPart,
        tool_def: ToolDefinition,
        args: dict[str, Any],
        error: Exception,
    ) -> Any:
        await self.guard.arecord_result(call.tool_name, args, error, _scope(ctx), ok=False)
        raise error


def _scope(ctx: RunContext[Any]) -> str:
    return f"pydantic-ai run {ctx.run_id}"
