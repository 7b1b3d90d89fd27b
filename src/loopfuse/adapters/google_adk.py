"""The guard in front of Google ADK tool calls, as a plugin or as agent callbacks.

::

    runner = InMemoryRunner(app=App(name="app", root_agent=agent, plugins=[LoopfusePlugin(guard)]))
    # or, on one agent:
    callbacks = loopfuse_callbacks(guard)
    agent = LlmAgent(..., before_tool_callback=callbacks.before, after_tool_callback=callbacks.after)

A denied call never runs: the before-tool callback answers it with ``{"error": text}``,
which the model receives as the function response. State is scoped to the session id
plus the invocation id, and to the agent's name inside it so that sub-agents keep their
own state (``share_subagents=True`` lets one invocation's agents share it). Once an agent
escalates, the callback ends the invocation the ADK way (``end_invocation``, with
``escalate`` and ``skip_summarization`` on the response event, so no further model call
is made) and the final function response names the loop under ``"loopfuse_stopped"``.
ADK ends only that agent's run that way (a ``SequentialAgent`` would go on to its next agent),
so the plugin also answers every later agent of the invocation with the stop text in place of
running it.

A call of a tool that does not exist reaches the before-tool callback with ADK's stand-in
tool: it is reported as an invalid turn (``Guard.note_invalid``), not checked as a call. ADK
answers it with its own "no tool with that name" text until the guard denies; then the
callback answers with the denial text, and escalation ends the invocation as above.

Each call is checked with ``round=`` the id of the event (the model's response) whose function
calls hold it (``round_of``), so identical calls of one response count once. An allowed call's
warning is added to its function response under ``"loopfuse_warning"`` (a response that is not a
dict becomes ``{"result": ...}``): the plugin adds it to the function response event
(``on_event_callback``), since an after-tool callback returning a response makes ADK skip the
agent's own after-tool callback and later plugins'; the agent callbacks return it.
"""

from __future__ import annotations

import contextvars
import itertools
from typing import TYPE_CHECKING, Any, NamedTuple

from ._common import (
    HostLimit,
    InvalidTurns,
    PendingCalls,
    PendingWarnings,
    jsonable,
    require,
    stop_error,
    with_warning,
)

require("google.adk", "google-adk")

from google.adk.plugins.base_plugin import BasePlugin  # noqa: E402
from google.adk.tools.agent_tool import AgentTool  # noqa: E402
from google.adk.tools.base_tool import BaseTool  # noqa: E402
from google.genai import types  # noqa: E402

if TYPE_CHECKING:
    from ..decision import Decision
    from ..guard import Guard

__all__ = ["LoopfusePlugin", "ToolCallbacks", "loopfuse_callbacks", "scope_of"]


def scope_of(tool_context: Any, share_subagents: bool = False) -> str:
    """The guard's agent identity: ``session/invocation`` (plus ``/agent`` unless shared)."""
    session = getattr(getattr(tool_context, "session", None), "id", None) or "adk"
    scope = f"{session}/{tool_context.invocation_id}"
    return scope if share_subagents else f"{scope}/{tool_context.agent_name}"


class _Gate:
    """The decisions shared by the plugin and the agent callbacks."""

    def __init__(self, guard: Guard, share_subagents: bool) -> None:
        self.guard = guard
        self.share_subagents = share_subagents
        self._denied: set[str] = set()
        self._limit = HostLimit(guard, "Google ADK")
        self._warnings = PendingWarnings()
        self._to_show = PendingWarnings()  # the plugin's: added to the function response event
        self._runs = _RunScopes()
        self._stops: PendingCalls[str] = PendingCalls()  # invocation id -> the stop's text
        self._paused: PendingCalls[bool] = PendingCalls()  # invocations waiting on a long-running tool
        self._nested = _NestedStops()
        self._invalid = InvalidTurns()  # by the model response (round_of)

    def note_event(self, invocation_context: Any, event: Any) -> None:
        """Whether the invocation's newest event pauses it (a long-running tool awaits its answer)."""
        self._show_warnings(event)
        if _pauses(invocation_context, event):
            self._paused.put(invocation_context.invocation_id, True)
        else:
            self._paused.pop(invocation_context.invocation_id)

    async def run_ended(self, invocation_id: str) -> None:
        """``run_async`` returned: the invocation's state goes, unless it paused (ADK resumes it,
        under the same id, with the long-running tool's answer)."""
        if not self._paused.pop(invocation_id):
            await self.forget_run(invocation_id)

    async def forget_run(self, invocation_id: str) -> None:
        """Drop the state of every agent of a finished invocation."""
        self._stops.pop(invocation_id)
        for scope in self._runs.pop(invocation_id):
            await self.guard.aforget(scope)

    def stop_content(self, invocation_id: str) -> types.Content | None:
        """What answers an agent of a stopped invocation instead of running it; None for any other."""
        text = self._stops.get(invocation_id)
        return None if text is None else types.Content(role="model", parts=[types.Part(text=text)])

    async def before(self, tool: Any, args: dict[str, Any], tool_context: Any) -> dict[str, Any] | None:
        agent = scope_of(tool_context, self.share_subagents)
        self._runs.add(tool_context.invocation_id, agent)
        if not self._limit.warned:
            run_config = getattr(tool_context, "run_config", None)
            self._limit.check("max_llm_calls", getattr(run_config, "max_llm_calls", None))
        if _unknown(tool):
            invalid = await self._invalid.anote(self.guard, agent, round_of(tool_context), "unknown tool")
            return self._answer(invalid, agent, tool_context)
        decision = await self.guard.acheck(tool.name, args, agent, round=round_of(tool_context))
        if not decision.allowed:
            self._denied.add(_call_id(tool_context))
        elif isinstance(tool, AgentTool):
            self._nested.enter(_call_id(tool_context))
        self._warnings.put(_call_id(tool_context), decision.warning)
        return self._answer(decision, agent, tool_context)

    def _answer(self, decision: Decision, agent: str, tool_context: Any) -> dict[str, Any] | None:
        """None lets the call run (or ADK answer it); else the denial, or the stop."""
        if decision.allowed:
            return None
        if decision.escalate:
            return self._stop(decision, agent, tool_context)
        return {"error": decision.message}

    def _show_warnings(self, event: Any) -> None:
        """Add the warnings of the plugin's calls to their function responses in ``event``
        (returning them from the after-tool callback would skip the agent's own and later plugins')."""
        if not self._to_show or not getattr(event, "content", None):
            return
        for response in event.get_function_responses():
            warning = self._to_show.pop(response.id)
            if warning is not None:
                response.response = with_warning(dict(response.response or {}), warning)

    async def after(
        self, tool: Any, args: dict[str, Any], tool_context: Any, result: Any, ok: bool, later: bool = False
    ) -> dict[str, Any] | None:
        """Report what the call returned; the response with the call's warning, if it has one
        (``later``: None, the warning added to the response's event by ``note_event``)."""
        if _unknown(tool):
            return None  # an invalid turn, never a call
        call_id = _call_id(tool_context)
        if call_id in self._denied:
            self._denied.discard(call_id)
            return None
        agent = scope_of(tool_context, self.share_subagents)
        stopped = self._nested.leave(call_id) if isinstance(tool, AgentTool) else None
        if stopped is not None:  # the agent it ran was stopped: the call failed, and says so
            await self.guard.arecord_result(tool.name, args, stopped, agent, ok=False)
            self._warnings.pop(call_id)
            return {"error": stopped}
        ok = ok and not _is_error(tool, result)
        await self.guard.arecord_result(tool.name, args, jsonable(result), agent, ok=ok)
        warning = self._warnings.pop(call_id)
        if warning is None or not ok:
            return None
        if later:
            self._to_show.put(call_id, warning)
            return None
        return with_warning(result if isinstance(result, dict) else {"result": result}, warning)

    def _stop(self, decision: Decision, agent: str, tool_context: Any) -> dict[str, Any]:
        tool_context.get_invocation_context().end_invocation = True
        tool_context.actions.escalate = True
        tool_context.actions.skip_summarization = True
        stopped = str(stop_error(self.guard, decision, agent))
        self._stops.put(tool_context.invocation_id, stopped)
        self._nested.stopped(stopped)
        return {"error": decision.message, "loopfuse_stopped": stopped}


class LoopfusePlugin(BasePlugin):
    """A runner plugin guarding every tool call of every agent the runner runs."""

    def __init__(self, guard: Guard, *, name: str = "loopfuse", share_subagents: bool = False) -> None:
        super().__init__(name=name)
        self._gate = _Gate(guard, share_subagents)

    async def before_tool_callback(
        self, *, tool: Any, tool_args: dict[str, Any], tool_context: Any
    ) -> dict[str, Any] | None:
        return await self._gate.before(tool, tool_args, tool_context)

    async def after_tool_callback(
        self, *, tool: Any, tool_args: dict[str, Any], tool_context: Any, result: dict[str, Any]
    ) -> dict[str, Any] | None:
        return await self._gate.after(tool, tool_args, tool_context, result, ok=True, later=True)

    async def on_tool_error_callback(
        self, *, tool: Any, tool_args: dict[str, Any], tool_context: Any, error: Exception
    ) -> dict[str, Any] | None:
        await self._gate.after(tool, tool_args, tool_context, error, ok=False)  # its type and text
        return None

    async def before_agent_callback(self, *, agent: Any, callback_context: Any) -> types.Content | None:
        """An agent of a stopped invocation does not run: the stop's text answers for it."""
        return self._gate.stop_content(callback_context.invocation_id)

    async def on_event_callback(self, *, invocation_context: Any, event: Any) -> None:
        self._gate.note_event(invocation_context, event)

    async def after_run_callback(self, *, invocation_context: Any) -> None:
        """The invocation ended, or paused: its agents' state goes when it ends."""
        await self._gate.run_ended(invocation_context.invocation_id)

    async def on_run_error_callback(self, *, invocation_context: Any, error: Exception) -> None:
        """The invocation ended with an error (ADK re-raises it): its agents' state goes too."""
        await self._gate.forget_run(invocation_context.invocation_id)


class ToolCallbacks(NamedTuple):
    """``before_tool_callback`` and ``after_tool_callback`` for one ``LlmAgent``."""

    before: Any
    after: Any


def loopfuse_callbacks(guard: Guard, *, share_subagents: bool = False) -> ToolCallbacks:
    """Callbacks to pass as an agent's ``before_tool_callback``/``after_tool_callback``."""
    gate = _Gate(guard, share_subagents)

    async def loopfuse_before_tool(
        tool: Any, args: dict[str, Any], tool_context: Any
    ) -> dict[str, Any] | None:
        return await gate.before(tool, args, tool_context)

    async def loopfuse_after_tool(
        tool: Any, args: dict[str, Any], tool_context: Any, tool_response: Any
    ) -> dict[str, Any] | None:
        return await gate.after(tool, args, tool_context, tool_response, ok=True)

    return ToolCallbacks(loopfuse_before_tool, loopfuse_after_tool)


def _unknown(tool: Any) -> bool:
    """ADK's stand-in for a tool name that resolved to nothing is a bare ``BaseTool`` (every
    tool that can run is a subclass)."""
    return type(tool) is BaseTool


_ROUND_SCAN = 16  # session events looked at, from the newest, for the model's response


def round_of(tool_context: Any) -> Any:
    """The id of the event (the model's response) that issued this call; None when it is not
    among the session's last events."""
    call_id = getattr(tool_context, "function_call_id", None)
    events = getattr(getattr(tool_context, "session", None), "events", None)
    if not call_id or not isinstance(events, list):
        return None
    for event in itertools.islice(reversed(events), _ROUND_SCAN):
        if any(c.id == call_id for c in event.get_function_calls()):
            return event.id
    return None


def _pauses(invocation_context: Any, event: Any) -> bool:
    """Whether ``event`` pauses its invocation, as ADK tells it (else: it asks a long-running tool)."""
    try:
        pauses = getattr(invocation_context, "should_pause_invocation", None)
        if callable(pauses):
            return bool(pauses(event))
        return bool(getattr(event, "long_running_tool_ids", None))
    except Exception:  # ADK's own objects: cannot tell, so the invocation ends as before
        return False


def _call_id(tool_context: Any) -> str:
    return str(getattr(tool_context, "function_call_id", None) or id(tool_context))


def _is_error(tool: Any, result: Any) -> bool:
    """Whether a response that did not raise says the call failed: as the tool's own ADK check
    tells it (an MCP tool's ``isError``, a function tool's ``error``), else by the shapes ADK's
    tools answer failures with (``{"error": ...}``, ``{"status": "error", ...}``, ``isError``, the
    reflection of ``ReflectAndRetryToolPlugin``)."""
    detect = getattr(tool, "_detect_error_in_response", None)
    try:
        if callable(detect) and detect(result):
            return True
    except Exception:  # the tool's own check, on the tool's own object
        pass
    if not isinstance(result, dict):
        return False
    try:  # the tool's own values: compared only as plain text (an array's __eq__ raises)
        if _text(result.get("response_type")) == _REFLECTED:
            return True
        return (
            set(result) == {"error"}
            or result.get("isError") is True
            or _text(result.get("status")) == "error"
        )
    except Exception:  # a key whose __eq__ or __hash__ raises: no verdict
        return False


def _text(value: Any) -> str | None:
    return str.__str__(value) if isinstance(value, str) else None


# How ADK's ReflectAndRetryToolPlugin answers a tool's error (registered before loopfuse, it
# answers the error first, and loopfuse sees its answer as the tool's response).
_REFLECTED = "ERROR_HANDLED_BY_REFLECT_AND_RETRY_PLUGIN"


class _NestedStops:
    """The stop of an agent run by an ``AgentTool``, for the call that ran it: ADK answers that
    call with the agent's last text (none, once stopped), which would hide the stop. The call's
    id is in a context variable from its before-tool callback to its after-tool one (the nested
    run, in the same task, sees it)."""

    def __init__(self) -> None:
        self._outer: PendingCalls[str | None] = PendingCalls()  # call id -> the call it is nested in
        self._stops: PendingCalls[str] = PendingCalls()  # call id -> the stop of the agent it ran

    def enter(self, call_id: str) -> None:
        self._outer.put(call_id, _AGENT_TOOL_CALL.get())
        _AGENT_TOOL_CALL.set(call_id)

    def stopped(self, text: str) -> None:
        call_id = _AGENT_TOOL_CALL.get()
        if call_id is not None:
            self._stops.put(call_id, text)

    def leave(self, call_id: str) -> str | None:
        """The stop of the agent the call ran, if it was stopped."""
        _AGENT_TOOL_CALL.set(self._outer.pop(call_id))
        return self._stops.pop(call_id)


_AGENT_TOOL_CALL: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "loopfuse_adk_agent_tool", default=None
)


class _RunScopes:
    """The guard scopes each running invocation has used, to forget when it ends. Bounded:
    past ``size`` invocations that never ended (a crashed runner), the oldest go."""

    def __init__(self, size: int = 1024) -> None:
        self._scopes: PendingCalls[set[str]] = PendingCalls(size)

    def add(self, invocation_id: str, scope: str) -> None:
        scopes = self._scopes.pop(invocation_id) or set()
        scopes.add(scope)
        self._scopes.put(invocation_id, scopes)

    def pop(self, invocation_id: str) -> set[str]:
        return self._scopes.pop(invocation_id) or set()
