"""LangChain v1 / LangGraph: the guard in front of every tool call of an agent.

``LoopfuseMiddleware(guard)`` is an ``AgentMiddleware`` for ``create_agent``. A denied
call never reaches the tool: the model gets a ``ToolMessage`` with ``status="error"``
carrying the denial text. When the guard escalates, the denial is marked, and the
middleware's ``before_model`` hook ends the run (``jump_to: "end"``) with a final
``AIMessage`` naming the loop. Its ``wrap_tool_call``/``awrap_tool_call`` also work as
``ToolNode(wrap_tool_call=...)`` in a hand-built LangGraph graph, where
``on_escalate="raise"`` stops the graph with ``LoopAbortedError`` instead (raised as a
LangGraph ``GraphBubbleUp`` too, so that no ``handle_tool_errors`` setting of the node turns it
into a tool message).

Invalid turns (``Guard.note_invalid``): a call of a tool the ``ToolNode`` does not have
(answered by LangGraph's "is not a valid tool" error), and a call whose arguments the tool's
schema rejects, are reported as invalid turns instead of checked as calls; the guard's
denial, from the ``[invalid] limit``-th in a row, replaces LangGraph's error text.

Scope (``_langchain_scopes``): under ``create_agent`` one invocation, named by a private state
field the middleware's ``before_agent`` sets (``loopfuse_run``: runs whose input reuses one
message object stay apart; an interrupted run resumed later keeps its name), within its
LangGraph thread when it has one; its state goes when it ends (``after_agent``). With
``share_thread=True`` a thread's invocations count together and its state stays for the next.
Parallel tool calls of one model turn run as separate LangGraph tasks; each is checked
when the host starts it, and the guard's lock keeps counts exact. Each call is checked with
``round=`` the id of the AIMessage that issued it (``round_of``), so identical calls of one
turn count once. An allowed call's warning (``Decision.warning``) is added to the content of
the ``ToolMessage`` the model reads (``with_warning``), after the guard has recorded the result.
"""

from __future__ import annotations

import itertools
from collections.abc import Awaitable, Callable
from typing import Annotated, Any, Literal, NotRequired

from langchain.agents.middleware import AgentMiddleware, AgentState, hook_config
from langchain.agents.middleware.types import PrivateStateAttr
from langchain_core.messages import AIMessage, AnyMessage, ToolMessage
from langchain_core.tools import BaseTool
from langgraph.errors import GraphBubbleUp, GraphInterrupt
from langgraph.prebuilt.tool_node import INVALID_TOOL_NAME_ERROR_TEMPLATE, ToolCallRequest
from langgraph.runtime import Runtime
from langgraph.types import Command
from pydantic import BaseModel, ValidationError

from .._process import process_number
from ..decision import Decision
from ..errors import LoopAbortedError
from ..guard import Guard
from ._common import HostLimit, InvalidTurns, PendingCalls, stop_error, stopped_text, with_warning
from ._langchain_scopes import finished_run_scope, scope_of

__all__ = ["LoopfuseMiddleware"]

ToolResult = ToolMessage | Command[Any]
_MARK = "loopfuse_stopped"


_RUNS = itertools.count(1)


class RunState(AgentState[Any]):
    """The agent's state with the run's name for the guard (never in the input or output)."""

    loopfuse_run: NotRequired[Annotated[str, PrivateStateAttr]]


class LoopfuseMiddleware(AgentMiddleware):
    """Deny looping tool calls and end the run once the agent ignores the denials."""

    state_schema = RunState

    def __init__(
        self, guard: Guard, *, on_escalate: Literal["end", "raise"] = "end", share_thread: bool = False
    ) -> None:
        super().__init__()
        self.guard = guard
        self.on_escalate = on_escalate
        self.share_thread = share_thread
        self._limit = HostLimit(guard, "LangGraph")
        self._schemas = _Schemas()
        self._in_agent = False  # create_agent runs this middleware's before_model each turn
        self._paused: PendingCalls[Decision] = PendingCalls()  # (scope, call id): awaiting a human
        self._invalid = InvalidTurns()  # by the AIMessage of the call (round_of)

    def wrap_tool_call(
        self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], ToolResult]
    ) -> ToolResult:
        self._check_recursion_limit(request)
        tool, args, agent = _call_of(request, self.share_thread)
        if request.tool is None:
            return self._unlisted(request, handler(request), agent)
        if self._schemas.rejects(request.tool, args):
            invalid = self._invalid.note(
                self.guard, agent, round_of(request), "arguments rejected by the tool's schema"
            )
            return handler(request) if invalid.allowed else self._refusal(request, invalid, agent)
        decision = self._paused.pop((agent, request.tool_call["id"]))
        if decision is None:
            decision = self.guard.check(tool, args, agent, round=round_of(request))
        if not decision.allowed:
            return self._refusal(request, decision, agent)
        try:
            result = handler(request)
        except Exception as exc:
            if not self._no_answer(exc, request, agent, decision):
                self.guard.record_result(tool, args, exc, agent, ok=False)
            raise
        self._record(tool, args, agent, _answer(result, request))
        return _warned(result, decision, request)

    async def awrap_tool_call(
        self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], Awaitable[ToolResult]]
    ) -> ToolResult:
        self._check_recursion_limit(request)
        tool, args, agent = _call_of(request, self.share_thread)
        if request.tool is None:
            return await self._aunlisted(request, await handler(request), agent)
        if self._schemas.rejects(request.tool, args):
            invalid = await self._invalid.anote(
                self.guard, agent, round_of(request), "arguments rejected by the tool's schema"
            )
            return (
                await handler(request) if invalid.allowed else await self._arefusal(request, invalid, agent)
            )
        decision = self._paused.pop((agent, request.tool_call["id"]))
        if decision is None:
            decision = await self.guard.acheck(tool, args, agent, round=round_of(request))
        if not decision.allowed:
            return await self._arefusal(request, decision, agent)
        try:
            result = await handler(request)
        except Exception as exc:
            if not self._no_answer(exc, request, agent, decision):
                await self.guard.arecord_result(tool, args, exc, agent, ok=False)
            raise
        answer = _answer(result, request)
        await self.guard.arecord_result(tool, args, _content(answer), agent, ok=_ok(answer))
        return _warned(result, decision, request)

    def forget_thread(self, thread_id: Any) -> None:
        """Count a hand-built graph's thread afresh from its next call: its ``ToolNode`` counts
        the thread's invocations together, and only the host knows that a new question starts."""
        self.guard.forget(f"thread:{thread_id}")

    async def aforget_thread(self, thread_id: Any) -> None:
        """``forget_thread`` from async code."""
        await self.guard.aforget(f"thread:{thread_id}")

    def before_agent(self, state: AgentState[Any], runtime: Runtime[Any]) -> dict[str, Any] | None:
        return {"loopfuse_run": f"{process_number():016x}-{next(_RUNS)}"}  # this run's own name (scope_of)

    async def abefore_agent(self, state: AgentState[Any], runtime: Runtime[Any]) -> dict[str, Any] | None:
        return self.before_agent(state, runtime)

    def after_agent(self, state: AgentState[Any], runtime: Runtime[Any]) -> dict[str, Any] | None:
        self._forget_run(state, runtime)
        return None

    async def aafter_agent(self, state: AgentState[Any], runtime: Runtime[Any]) -> dict[str, Any] | None:
        scope = finished_run_scope(runtime, state, self.share_thread)
        if scope is not None:
            await self.guard.aforget(scope)
        return None

    @hook_config(can_jump_to=["end"])
    def before_model(self, state: AgentState[Any], runtime: Runtime[Any]) -> dict[str, Any] | None:
        self._in_agent = True
        return _end_if_stopped(state.get("messages", ()))

    @hook_config(can_jump_to=["end"])
    async def abefore_model(self, state: AgentState[Any], runtime: Runtime[Any]) -> dict[str, Any] | None:
        self._in_agent = True
        return _end_if_stopped(state.get("messages", ()))

    def _unlisted(self, request: ToolCallRequest, answer: ToolResult, agent: str) -> ToolResult:
        """A call of a tool the ToolNode does not have, after the inner handler answered it."""
        tool, args, _ = _call_of(request, self.share_thread)
        if _unknown_tool_answer(answer, tool):
            invalid = self._invalid.note(self.guard, agent, round_of(request), "unknown tool")
            return answer if invalid.allowed else self._refusal(request, invalid, agent)
        decision = self.guard.check(
            tool, args, agent, round=round_of(request)
        )  # served inside: checked once run
        if not decision.allowed:
            return self._refusal(request, decision, agent)
        self._record(tool, args, agent, _answer(answer, request))
        return _warned(answer, decision, request)

    async def _aunlisted(self, request: ToolCallRequest, answer: ToolResult, agent: str) -> ToolResult:
        tool, args, _ = _call_of(request, self.share_thread)
        if _unknown_tool_answer(answer, tool):
            invalid = await self._invalid.anote(self.guard, agent, round_of(request), "unknown tool")
            return answer if invalid.allowed else await self._arefusal(request, invalid, agent)
        decision = await self.guard.acheck(tool, args, agent, round=round_of(request))
        if not decision.allowed:
            return await self._arefusal(request, decision, agent)
        message = _answer(answer, request)
        await self.guard.arecord_result(tool, args, _content(message), agent, ok=_ok(message))
        return _warned(answer, decision, request)

    def _check_recursion_limit(self, request: ToolCallRequest) -> None:
        """Warn once if the run's recursion_limit ends a loop before the guard does. A model
        turn takes at least 2 super-steps (model, tools); under create_agent 3 (this
        middleware's before_model too), plus its before_agent once and ending the run 3 more."""
        if self._limit.warned:
            return
        config = getattr(request.runtime, "config", None) or {}
        per_turn, tail = (3, 4) if self._in_agent else (2, 0)
        self._limit.check("recursion_limit", config.get("recursion_limit"), lambda p: per_turn * p + tail)

    def _forget_run(self, state: Any, runtime: Any) -> None:
        """A run's state goes when the run ends; a shared thread's stays for its next invocation."""
        scope = finished_run_scope(runtime, state, self.share_thread)
        if scope is not None:
            self.guard.forget(scope)

    def _no_answer(self, exc: Exception, request: ToolCallRequest, agent: str, decision: Decision) -> bool:
        """Whether ``exc`` is LangGraph's control flow, not a failure: an interrupt (the call runs
        again on resume, then not checked again: it was) or a command to the parent graph."""
        if not isinstance(exc, GraphBubbleUp) or isinstance(exc, LoopAbortedError):
            return False
        if isinstance(exc, GraphInterrupt):
            self._paused.put((agent, request.tool_call["id"]), decision)
        return True

    def _record(self, tool: str, args: Any, agent: str, answer: ToolMessage | None) -> None:
        self.guard.record_result(tool, args, _content(answer), agent, ok=_ok(answer))

    async def _arefusal(self, request: ToolCallRequest, decision: Decision, agent: str) -> ToolMessage:
        if decision.escalate and self.on_escalate == "raise":
            await self.guard.aforget(agent)
        return self._refusal(request, decision, agent, forgotten=True)

    def _refusal(
        self, request: ToolCallRequest, decision: Decision, agent: str, *, forgotten: bool = False
    ) -> ToolMessage:
        """The denial as the call's ToolMessage; raising ends the run, and its state goes."""
        artifact = None
        if decision.escalate:
            error = stop_error(self.guard, decision, agent)
            if self.on_escalate == "raise":
                if not forgotten:
                    self.guard.forget(agent)
                raise _through_the_graph(error)
            artifact = {_MARK: stopped_text(error)}
        call = request.tool_call
        return ToolMessage(
            content=decision.message or "",
            name=call["name"],
            tool_call_id=call["id"] or "",
            status="error",
            artifact=artifact,
        )


class _GraphLoopAborted(LoopAbortedError, GraphBubbleUp):
    """A ``LoopAbortedError`` LangGraph lets through: a ``ToolNode`` built with
    ``handle_tool_errors=True`` turns any other exception into a tool message for the model,
    and the looping agent would go on to the recursion limit."""


def _through_the_graph(error: LoopAbortedError) -> LoopAbortedError:
    return _GraphLoopAborted(agent=error.agent, tool=error.tool, denials=error.denials, kind=error.kind)


def _call_of(request: ToolCallRequest, share_thread: bool) -> tuple[str, Any, str]:
    call = request.tool_call
    return call["name"], call.get("args") or {}, scope_of(request, share_thread)


_ROUND_SCAN = 64  # messages looked at, from the newest, for the AIMessage of a call


def round_of(request: ToolCallRequest) -> Any:
    """The id of the AIMessage whose ``tool_calls`` hold this call (the model turn that
    issued it); None when it is not in the state's last messages."""
    call_id = request.tool_call.get("id")
    state = request.state
    messages = state.get("messages") if isinstance(state, dict) else getattr(state, "messages", None)
    if not call_id or not isinstance(messages, list):
        return None
    for message in itertools.islice(reversed(messages), _ROUND_SCAN):
        if isinstance(message, AIMessage) and any(c.get("id") == call_id for c in message.tool_calls):
            return message.id or tuple(c.get("id") for c in message.tool_calls)
    return None


def _warned(result: ToolResult, decision: Decision, request: ToolCallRequest) -> ToolResult:
    """``result`` with the decision's warning added to the content of the ToolMessage that
    answers the call (``_answer``: the result, or one of a ``Command``'s messages)."""
    answer = _answer(result, request) if decision.warning is not None else None
    if answer is None:
        return result
    warned = answer.model_copy(update={"content": with_warning(answer.content, decision.warning)})
    if answer is result or not isinstance(result, Command):
        return warned
    update: Any = result.update
    update["messages"] = [warned if m is answer else m for m in update["messages"]]
    return result


def _answers(message: Any, call_id: Any) -> bool:
    return isinstance(message, ToolMessage) and message.tool_call_id == call_id


_UNKNOWN_TOOL = INVALID_TOOL_NAME_ERROR_TEMPLATE.partition("{available_tools}")[0]


def _unknown_tool_answer(answer: ToolResult, tool: str) -> bool:
    """Whether ``answer`` is the ToolNode's "not a valid tool" error for ``tool``."""
    if not isinstance(answer, ToolMessage) or answer.status != "error" or not isinstance(answer.content, str):
        return False
    return answer.content.startswith(_UNKNOWN_TOOL.format(requested_tool=tool))


class _Schemas:
    """The schema each tool's arguments are validated with, found once per tool (reading
    ``tool_call_schema`` costs about 10 us); None for a tool whose arguments cannot be judged
    alone. Bounded: tools are few, and an evicted one is looked up again."""

    def __init__(self) -> None:
        self._known: dict[int, tuple[BaseTool, type[BaseModel] | None]] = {}

    def rejects(self, tool: BaseTool, args: Any) -> bool:
        """Whether the tool's own schema rejects ``args``, as the ToolNode would before running it."""
        schema = self._schema(tool)
        if schema is None:
            return False
        try:
            schema.model_validate(args)
        except ValidationError:
            return True
        except Exception:  # a validator that fails otherwise: not ours to judge
            return False
        return False

    def _schema(self, tool: BaseTool) -> type[BaseModel] | None:
        known = self._known.get(id(tool))
        if known is None or known[0] is not tool:
            if len(self._known) >= 256:
                self._known.clear()
            known = self._known[id(tool)] = (tool, _own_schema(tool))
        return known[1]


def _own_schema(tool: BaseTool) -> type[BaseModel] | None:
    """The tool's pydantic schema when the model's arguments are all of its arguments; None
    when the ToolNode injects some (state, runtime) or the schema is not a pydantic model."""
    schema = tool.args_schema
    try:
        if not isinstance(schema, type) or not issubclass(schema, BaseModel):
            return None
        same = tool.tool_call_schema.model_fields.keys() == schema.model_fields.keys()  # type: ignore[union-attr]
    except Exception:  # a schema that cannot be read: not ours to judge
        return None
    return schema if same else None


def _answer(result: ToolResult, request: ToolCallRequest) -> ToolMessage | None:
    """The ToolMessage answering the call: the result, or the one among a ``Command``'s
    ``update["messages"]`` that answers this call; None when there is none."""
    if isinstance(result, ToolMessage):
        return result
    update = result.update if isinstance(result, Command) else None
    messages = update.get("messages") if isinstance(update, dict) else None
    if not isinstance(messages, list):
        return None
    call_id = request.tool_call.get("id")
    return next((m for m in messages if _answers(m, call_id)), None)


def _content(answer: ToolMessage | None) -> Any:
    """What the guard learns of a tool's answer: its message's content, else nothing."""
    return answer.content if answer is not None else None


def _ok(answer: ToolMessage | None) -> bool | None:
    return answer.status != "error" if answer is not None else None


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
