"""Pydantic AI (v2): the guard as a capability. Needs ``pip install 'loopfuse[pydantic-ai]'``.

``Agent(model, capabilities=[LoopfuseCapability(guard)])``. Its ``before_tool_execute`` hook
checks each call; a denied call does not run and the model gets the denial text as a
failed tool result (``ToolFailed``: flagged as an error, it spends no retry budget, unlike
``ModelRetry``). Once the guard escalates, the hook raises ``LoopAbortedError``, which
ends the run: ``agent.run`` raises it.

Invalid turns (``Guard.note_invalid``): arguments a tool's schema or validator rejects
(``on_tool_validate_error``) and calls of tools that do not exist (the retried result Pydantic
AI answers them with, seen before the next model request) are reported instead of checked as
calls. Pydantic AI's own retry text reaches the model until the guard denies; then the denial
text does, and escalation raises ``LoopAbortedError`` as for any loop. The agent's ``retries``
(default 1) may end such a run first, with ``UnexpectedModelBehavior``.

Scope: the run id (``RunContext.run_id``), so a sub-agent run inside a tool has its own
state. The run's state goes when the run ends, normally, by an error or cancelled
(``wrap_run``). Parallel tool calls of one turn are checked in the order Pydantic AI starts them;
the guard's lock keeps counts exact. Each call is checked with ``round=`` the run step
(``RunContext.run_step``, one per model response), so identical calls of one response count
once. An allowed call's warning is added to what the tool returned (``after_tool_execute``,
``with_warning``), after the guard has recorded it.

A call is judged by the arguments the model sent (``ToolCallPart.args_as_dict()``, plain JSON),
not the validated ones, which may hold pydantic models or dataclasses; a result that is one is
reported as its JSON data. A tool failing with ``ModelRetry`` or ``ToolFailed`` (which Pydantic AI
never passes to ``on_tool_execute_error``) is reported as an error by ``wrap_tool_execute``, then
re-raised unchanged. Each call that ran is reported once, whichever hook sees it first.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

try:
    from pydantic_ai import RunContext, ToolReturn
    from pydantic_ai.capabilities import AbstractCapability
    from pydantic_ai.capabilities.abstract import WrapRunHandler, WrapToolExecuteHandler
    from pydantic_ai.exceptions import ModelRetry, ToolFailed, ToolFailedError, ToolRetryError
    from pydantic_ai.messages import ModelRequest, ToolCallPart, ToolReturnPart
    from pydantic_ai.models import ModelRequestContext
    from pydantic_ai.run import AgentRunResult
    from pydantic_ai.tools import ToolDefinition
    from pydantic_core import ValidationError
except ImportError as exc:  # pragma: no cover - exercised in a subprocess test
    raise ImportError(
        "loopfuse.adapters.pydantic_ai needs Pydantic AI v2: pip install 'loopfuse[pydantic-ai]'"
    ) from exc

from ..guard import Guard
from ._common import HostLimit, InvalidTurns, PendingCalls, jsonable, stop_error, with_warning

__all__ = ["LoopfuseCapability"]


@dataclass
class LoopfuseCapability(AbstractCapability[Any]):
    """Deny looping tool calls; stop the run once the agent ignores the denials."""

    guard: Guard
    _limit: HostLimit = field(init=False, repr=False, compare=False)
    _running: PendingCalls[_Running] = field(init=False, repr=False, compare=False)
    _rejected: InvalidTurns = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self._limit = HostLimit(self.guard, "Pydantic AI")
        self._running = PendingCalls()
        self._rejected = InvalidTurns()  # by the run step (one model reply)

    async def wrap_run(self, ctx: RunContext[Any], *, handler: WrapRunHandler) -> AgentRunResult[Any]:
        try:
            return await handler()
        finally:
            await self.guard.aforget(_scope(ctx))

    async def before_tool_execute(
        self, ctx: RunContext[Any], *, call: ToolCallPart, tool_def: ToolDefinition, args: dict[str, Any]
    ) -> dict[str, Any]:
        scope = _scope(ctx)
        if not self._limit.warned:
            self._limit.check("request_limit", getattr(ctx.usage_limits, "request_limit", None))
        sent = call.args_as_dict()
        decision = await self.guard.acheck(call.tool_name, sent, scope, round=ctx.run_step)
        if decision.allowed:
            self._running.put((scope, call.tool_call_id), _Running(sent, decision.warning))
            return args
        if decision.escalate:
            raise stop_error(self.guard, decision, scope)
        raise ToolFailed(decision.message or "")

    async def on_tool_validate_error(
        self,
        ctx: RunContext[Any],
        *,
        call: ToolCallPart,
        tool_def: ToolDefinition,
        args: Any,
        error: ValidationError | ModelRetry,
    ) -> dict[str, Any]:
        """Arguments the tool rejects: an invalid turn (one for all the reply's calls it rejects);
        Pydantic AI's retry, or the denial."""
        scope = _scope(ctx)
        decision = await self._rejected.anote(self.guard, scope, ctx.run_step, "arguments rejected")
        if decision.allowed:
            raise error
        if decision.escalate:
            raise stop_error(self.guard, decision, scope)
        raise ToolFailed(decision.message or "")

    async def before_model_request(
        self, ctx: RunContext[Any], request_context: ModelRequestContext
    ) -> ModelRequestContext:
        """Report the calls of unknown tools the request answers; a denial replaces the answer."""
        messages = request_context.messages
        last = messages[-1] if messages else None
        if isinstance(last, ModelRequest):
            unknown = [p for p in last.parts if isinstance(p, ToolReturnPart) and _unknown_tool(p)]
            if unknown:
                await self._invalid_calls(ctx, unknown)
        return request_context

    async def _invalid_calls(self, ctx: RunContext[Any], parts: list[ToolReturnPart[Any]]) -> None:
        """The reply's calls of unknown tools: one invalid turn, whose denial answers each."""
        scope = _scope(ctx)
        decision = await self.guard.anote_invalid(scope, reason="unknown tool")
        if decision.escalate:
            raise stop_error(self.guard, decision, scope)
        for part in parts if not decision.allowed else ():
            part.content = decision.message or ""

    async def after_tool_execute(
        self,
        ctx: RunContext[Any],
        *,
        call: ToolCallPart,
        tool_def: ToolDefinition,
        args: dict[str, Any],
        result: Any,
    ) -> Any:
        running = await self._report(ctx, call, jsonable(result), ok=True)
        return _warned(result, running.warning if running else None)

    async def on_tool_execute_error(
        self,
        ctx: RunContext[Any],
        *,
        call: ToolCallPart,
        tool_def: ToolDefinition,
        args: dict[str, Any],
        error: Exception,
    ) -> Any:
        await self._report(ctx, call, error, ok=False)
        raise error

    async def wrap_tool_execute(
        self,
        ctx: RunContext[Any],
        *,
        call: ToolCallPart,
        tool_def: ToolDefinition,
        args: dict[str, Any],
        handler: WrapToolExecuteHandler,
    ) -> Any:
        """Report a tool's ``ModelRetry`` or ``ToolFailed``, which skip ``on_tool_execute_error``
        (and reach here wrapped: ``ToolRetryError``, ``ToolFailedError``)."""
        try:
            return await handler(args)
        except (ModelRetry, ToolFailed, ToolRetryError, ToolFailedError) as error:
            await self._report(ctx, call, _unwrapped(error), ok=False)
            raise

    async def _report(
        self, ctx: RunContext[Any], call: ToolCallPart, result: Any, *, ok: bool
    ) -> _Running | None:
        """Record the result of an allowed call not yet reported; a denied call has none."""
        scope = _scope(ctx)
        running = self._running.pop((scope, call.tool_call_id))
        if running is not None:
            await self.guard.arecord_result(call.tool_name, running.args, result, scope, ok=ok)
        return running


@dataclass(frozen=True)
class _Running:
    """An allowed call waiting for its result: the arguments it was checked with, its warning."""

    args: dict[str, Any]
    warning: str | None


def _unwrapped(error: Exception) -> BaseException:
    """The tool's own ``ModelRetry`` or ``ToolFailed`` that Pydantic AI wrapped in ``error``."""
    cause = error.__cause__
    return cause if isinstance(cause, ModelRetry | ToolFailed) else error


def _unknown_tool(part: ToolReturnPart[Any]) -> bool:
    """Whether ``part`` answers a call of a tool that does not exist (a retried result)."""
    return getattr(part.retry, "cause", None) == "unknown_tool"


def _scope(ctx: RunContext[Any]) -> str:
    return f"pydantic-ai run {ctx.run_id}"


def _warned(result: Any, warning: str | None) -> Any:
    """``with_warning`` in the forms Pydantic AI sends: a ``ToolReturn``'s return value warned
    (its content and metadata kept); any other object (an image, a pydantic model) as a list of
    it and the warning, which Pydantic AI sends as it sends the object alone, the warning beside."""
    if warning is None or isinstance(result, str | dict | list) or result is None:
        return with_warning(result, warning)
    if isinstance(result, ToolReturn):
        return dataclasses.replace(result, return_value=_warned(result.return_value, warning))
    return [result, warning]
