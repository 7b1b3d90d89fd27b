"""LangChain v1 / LangGraph: the guard in front of every tool call of an agent.

``LoopfuseMiddleware(guard)`` is an ``AgentMiddleware`` for ``create_agent``. A denied
call never reaches the tool: the model gets a ``ToolMessage`` with ``status="error"``
carrying the denial text. When the guard escalates, the denial is marked, and the
middleware's ``before_model`` hook ends the run (``jump_to: "end"``) with a final
``AIMessage`` naming the loop. Its ``wrap_tool_call``/``awrap_tool_call`` also work as
``ToolNode(wrap_tool_call=...)`` in a hand-built LangGraph graph, where
``on_escalate="raise"`` stops the graph with ``LoopAbortedError`` instead.

Scope: the LangGraph thread id, else the run (the id of the run's first message), plus
the parent checkpoint namespace so that a sub-agent run inside a tool has its own state.
A run's state goes when the run ends (``after_agent``); a thread's stays, since the
conversation may continue in the next invocation.
Parallel tool calls of one model turn run as separate LangGraph tasks; each is checked
when the host starts it, and the guard's lock keeps counts exact.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Literal

from langchain.agents.middleware import AgentMiddleware, AgentState, hook_config
from langchain_core.messages import AIMessage, AnyMessage, ToolMessage
from langgraph.config import get_config
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.runtime import Runtime
from langgraph.types import Command

from ..decision import Decision
from ..guard import Guard
from ._common import abort_error, stopped_text

__all__ = ["LoopfuseMiddleware"]

ToolResult = ToolMessage | Command[Any]
_MARK = "loopfuse_stopped"


class LoopfuseMiddleware(AgentMiddleware):
    """Deny looping tool calls and end the run once the agent ignores the denials."""

    def __init__(self, guard: Guard, *, on_escalate: Literal["end", "raise"] = "end") -> None:
        super().__init__()
        self.guard = guard
        self.on_escalate = on_escalate

    def wrap_tool_call(
        self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], ToolResult]
    ) -> ToolResult:
        tool, args, agent = _call_of(request)
        decision = self.guard.check(tool, args, agent)
        if not decision.allowed:
            return self._refusal(request, decision, agent)
        try:
            result = handler(request)
        except Exception as exc:
            self.guard.record_result(tool, args, exc, agent, ok=False)
            raise
        self._record(tool, args, agent, result)
        return result

    async def awrap_tool_call(
        self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], Awaitable[ToolResult]]
    ) -> ToolResult:
        tool, args, agent = _call_of(request)
        decision = await self.guard.acheck(tool, args, agent)
        if not decision.allowed:
            return self._refusal(request, decision, agent)
        try:
            result = await handler(request)
        except Exception as exc:
            await self.guard.arecord_result(tool, args, exc, agent, ok=False)
            raise
        await self.guard.arecord_result(tool, args, _content(result), agent, ok=_ok(result))
        return result

    def after_agent(self, state: AgentState[Any], runtime: Runtime[Any]) -> dict[str, Any] | None:
        self._forget_run(state, runtime)
        return None

    async def aafter_agent(self, state: AgentState[Any], runtime: Runtime[Any]) -> dict[str, Any] | None:
        self._forget_run(state, runtime)
        return None

    @hook_config(can_jump_to=["end"])
    def before_model(self, state: AgentState[Any], runtime: Runtime[Any]) -> dict[str, Any] | None:
        return _end_if_stopped(state.get("messages", ()))

    @hook_config(can_jump_to=["end"])
    async def abefore_model(self, state: AgentState[Any], runtime: Runtime[Any]) -> dict[str, Any] | None:
        return _end_if_stopped(state.get("messages", ()))

    def _forget_run(self, state: Any, runtime: Any) -> None:
        """A run's state goes when the run ends; a thread's stays for its next invocation."""
        scope = finished_run_scope(runtime, state)
        if scope is not None:
            self.guard.forget(scope)

    def _record(self, tool: str, args: Any, agent: str, result: ToolResult) -> None:
        self.guard.record_result(tool, args, _content(result), agent, ok=_ok(result))

    def _refusal(self, request: ToolCallRequest, decision: Decision, agent: str) -> ToolMessage:
        artifact = None
        if decision.escalate:
            error = abort_error(self.guard, decision, agent)
            if self.on_escalate == "raise":
                raise error
            artifact = {_MARK: stopped_text(error)}
        call = request.tool_call
        return ToolMessage(
            content=decision.message or "",
            name=call["name"],
            tool_call_id=call["id"] or "",
            status="error",
            artifact=artifact,
        )


def _call_of(request: ToolCallRequest) -> tuple[str, Any, str]:
    call = request.tool_call
    return call["name"], call.get("args") or {}, scope_of(request)


def scope_of(request: ToolCallRequest) -> str:
    """``thread:<id>`` or ``run:<first message id>``, with the parent namespace if nested."""
    runtime = getattr(request, "runtime", None)
    config = getattr(runtime, "config", None) or {}
    thread = _thread_of(config)
    base = f"thread:{thread}" if thread is not None else _run_of(runtime, request.state)
    return _nested(base, runtime, config)


def finished_run_scope(runtime: Any, state: Any) -> str | None:
    """The ``run:`` scope a run that just ended leaves behind; None for a thread's scope
    (its conversation may continue) and for the shared ``run`` of runs without ids."""
    config = _node_config()
    if _thread_of(config) is not None:
        return None
    base = _run_of(runtime, state)
    return None if base == "run" else _nested(base, runtime, config)


def _node_config() -> Any:
    """The config of the graph node running now (middleware hooks get no config)."""
    try:
        return get_config()
    except RuntimeError:
        return {}


def _thread_of(config: Any) -> Any:
    return (config.get("configurable") or {}).get("thread_id")


def _nested(base: str, runtime: Any, config: Any) -> str:
    parent = _namespace(runtime, config).rpartition("|")[0]
    return f"{base} in {parent}" if parent else base


def _namespace(runtime: Any, config: Any) -> str:
    info = getattr(runtime, "execution_info", None)
    namespace = getattr(info, "checkpoint_ns", None)
    if namespace is None:
        namespace = (config.get("metadata") or {}).get("checkpoint_ns")
    return namespace if isinstance(namespace, str) else ""


def _run_of(runtime: Any, state: Any) -> str:
    info = getattr(runtime, "execution_info", None)
    run_id = getattr(info, "run_id", None)
    if run_id is not None:
        return f"run:{run_id}"
    messages = state.get("messages") if isinstance(state, dict) else getattr(state, "messages", None)
    first_id = getattr(messages[0], "id", None) if messages else None
    return f"run:{first_id}" if first_id else "run"


def _content(result: ToolResult) -> Any:
    """What the guard learns of a tool's answer: a ToolMessage's content, else nothing."""
    return result.content if isinstance(result, ToolMessage) else None


def _ok(result: ToolResult) -> bool | None:
    return result.status != "error" if isinstance(result, ToolMessage) else None


def _end_if_stopped(messages: Any) -> dict[str, Any] | None:
    """``jump_to: end`` with the final message if the last tool turn escalated."""
    text = _stop_text(list(messages))
    if text is None:
        return None
    return {"jump_to": "end", "messages": [AIMessage(content=text)]}


def _stop_text(messages: list[AnyMessage]) -> str | None:
    for message in reversed(messages):
        if not isinstance(message, ToolMessage):
            return None
        artifact = message.artifact
        if isinstance(artifact, dict) and isinstance(artifact.get(_MARK), str):
            return str(artifact[_MARK])
    return None
