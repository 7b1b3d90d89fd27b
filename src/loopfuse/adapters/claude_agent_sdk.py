"""The guard in front of the Claude Agent SDK's tool calls, as ``PreToolUse`` hooks.

::

    options = ClaudeAgentOptions(hooks=loopfuse_hooks(guard), ...)

The ``PreToolUse`` hook denies a repeated call with ``permissionDecision: "deny"``; the
CLI hands the model the reason as the tool's error result. State is scoped to the task the
session is on: each prompt the user submits (a ``UserPromptSubmit`` hook) starts a new one,
named ``<session id>#<process token>-<n>``, and the previous task's state goes (pass
``share_session=True`` for one state per session id). The notice the CLI sends as a prompt when
a background sub-agent ends (``<task-notification>``) continues the task. Inside a sub-agent the
scope adds the sub-agent's ``agent_id``, and its state goes when it stops (a ``SubagentStop``
hook); ``share_subagents=True`` gives a task's sub-agents the main agent's state. Once an
agent escalates, the hook also answers ``continue: false`` with a ``stopReason`` (and a
``systemMessage``, which the SDK streams as a ``SystemMessage``) naming the loop: the CLI
ends the run with ``terminal_reason == "hook_stopped"``. ``PostToolUse`` and
``PostToolUseFailure`` hooks report results to the guard.

An allowed call's warning is added to the tool's output by the ``PostToolUse`` hook
(``updatedToolOutput``: the output with ``with_warning``; for an MCP tool, one more text
block). The CLI keeps a built-in tool's original output when the changed one does not match
the tool's output schema. Hook inputs do not name the assistant message that issued a call,
so calls are checked without ``round=``.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from ..config import normalize_name
from ._common import PendingWarnings, abort_error, require, with_warning

require("claude_agent_sdk", "claude-agent-sdk")

from claude_agent_sdk import HookMatcher  # noqa: E402

if TYPE_CHECKING:
    from ..decision import Decision
    from ..guard import Guard

__all__ = ["loopfuse_hooks", "scope_of"]

Hook = Callable[[Any, "str | None", Any], Awaitable[Any]]


def loopfuse_hooks(
    guard: Guard, *, matcher: str | None = None, share_subagents: bool = False, share_session: bool = False
) -> dict[str, list[HookMatcher]]:
    """Hook configuration for ``ClaudeAgentOptions(hooks=...)``.

    ``matcher`` restricts the hooks to tool names matching it (all tools by default).
    To combine with hooks of your own, extend the lists of the returned mapping.
    """
    warnings, tasks = PendingWarnings(), _Tasks(share_subagents)
    hooks = {
        "PreToolUse": [HookMatcher(matcher=matcher, hooks=[_pre_tool_use(guard, tasks, warnings)])],
        "PostToolUse": [HookMatcher(matcher=matcher, hooks=[_post_tool_use(guard, tasks, True, warnings)])],
        "PostToolUseFailure": [
            HookMatcher(matcher=matcher, hooks=[_post_tool_use(guard, tasks, False, warnings)])
        ],
    }
    if not share_session:
        hooks["UserPromptSubmit"] = [HookMatcher(hooks=[_prompt_submitted(guard, tasks)])]
    if not share_subagents:
        hooks["SubagentStop"] = [HookMatcher(hooks=[_subagent_stopped(guard, tasks)])]
    return hooks


def scope_of(hook_input: Any, share_subagents: bool = False) -> str:
    """A hook input's session identity: ``session`` or ``session/agent_id``. The hooks count
    per task within it (``session#<token>-<n>``), or by it with ``share_session=True``."""
    return _within(_session(hook_input), hook_input, share_subagents)


def _session(hook_input: Any) -> str:
    return str(hook_input.get("session_id") or "claude")


def _within(base: str, hook_input: Any, share_subagents: bool) -> str:
    """``base``, or inside a sub-agent ``base/agent_id`` unless sub-agents share it."""
    agent_id = hook_input.get("agent_id")
    return f"{base}/{agent_id}" if agent_id and not share_subagents else base


_TOKEN = os.urandom(4).hex()  # processes sharing Redis never share a task of a resumed session
_SESSIONS = 10_000  # sessions whose task is remembered; the oldest go first


class _Tasks:
    """The task each session is on: the count of prompts submitted in it, in this process; and
    the task each running sub-agent started in (a background one runs on into the next)."""

    def __init__(self, share_subagents: bool) -> None:
        self.share_subagents = share_subagents
        self._prompts: dict[str, int] = {}
        self._subagents: dict[tuple[str, str], str] = {}
        self._lock = threading.Lock()

    def scope(self, hook_input: Any) -> str:
        """``scope_of`` with the task in place of the session id: the session's current task,
        or the one a sub-agent started in."""
        session, agent_id = _session(hook_input), hook_input.get("agent_id")
        if not agent_id or self.share_subagents:
            return self._task(session)
        return f"{self._started_in(session, str(agent_id))}/{agent_id}"

    def _started_in(self, session: str, agent_id: str) -> str:
        task = self._subagents.get((session, agent_id))
        if task is None:
            with self._lock:
                task = self._subagents.setdefault((session, agent_id), self._task(session))
                if len(self._subagents) > _SESSIONS:
                    self._subagents.pop(next(iter(self._subagents)))
        return task

    def stopped(self, hook_input: Any) -> str | None:
        """The scope of the sub-agent that stopped, no longer remembered; None for no sub-agent."""
        agent_id = hook_input.get("agent_id")
        if not agent_id:
            return None
        scope = self.scope(hook_input)
        with self._lock:
            self._subagents.pop((_session(hook_input), str(agent_id)), None)
        return scope

    def _task(self, session: str) -> str:
        prompts = self._prompts.get(session)
        return session if prompts is None else f"{session}#{_TOKEN}-{prompts}"

    def next_prompt(self, hook_input: Any) -> str:
        """Start the session's next task; the scope of the task it ends (its main agent)."""
        session = _session(hook_input)
        ended = self._task(session)
        with self._lock:
            self._prompts[session] = self._prompts.pop(session, 0) + 1
            if len(self._prompts) > _SESSIONS:
                self._prompts.pop(next(iter(self._prompts)))
        return ended


_NOTIFICATION = "<task-notification>"  # the CLI's prompt when a background sub-agent ends


def _prompt_submitted(guard: Guard, tasks: _Tasks) -> Hook:
    async def loopfuse_user_prompt_submit(
        hook_input: Any, tool_use_id: str | None, context: Any
    ) -> dict[str, Any]:
        if not str(hook_input.get("prompt", "")).lstrip().startswith(_NOTIFICATION):
            await guard.aforget(tasks.next_prompt(hook_input))
        return {}

    return loopfuse_user_prompt_submit


def _subagent_stopped(guard: Guard, tasks: _Tasks) -> Hook:
    async def loopfuse_subagent_stop(
        hook_input: Any, tool_use_id: str | None, context: Any
    ) -> dict[str, Any]:
        scope = tasks.stopped(hook_input)
        if scope is not None:
            await guard.aforget(scope)
        return {}

    return loopfuse_subagent_stop


def _pre_tool_use(guard: Guard, tasks: _Tasks, warnings: PendingWarnings) -> Hook:
    async def loopfuse_pre_tool_use(hook_input: Any, tool_use_id: str | None, context: Any) -> dict[str, Any]:
        tool = str(hook_input.get("tool_name", ""))
        if _exempt(guard, tool):
            return {}
        agent = tasks.scope(hook_input)
        decision = await guard.acheck(tool, hook_input.get("tool_input"), agent)
        if decision.allowed:
            warnings.put((agent, tool_use_id), decision.warning)
            return {}
        return _denial(guard, decision, agent)

    return loopfuse_pre_tool_use


def _post_tool_use(guard: Guard, tasks: _Tasks, ok: bool, warnings: PendingWarnings) -> Hook:
    async def loopfuse_post_tool_use(
        hook_input: Any, tool_use_id: str | None, context: Any
    ) -> dict[str, Any]:
        tool = str(hook_input.get("tool_name", ""))
        result = hook_input.get("tool_response") if ok else hook_input.get("error")
        agent = tasks.scope(hook_input)
        await guard.arecord_result(tool, hook_input.get("tool_input"), result, agent, ok=ok)
        warning = warnings.pop((agent, tool_use_id))
        if warning is None or not ok:
            return {}
        output = {"hookEventName": "PostToolUse", "updatedToolOutput": with_warning(result, warning)}
        return {"hookSpecificOutput": output}

    return loopfuse_post_tool_use


def _denial(guard: Guard, decision: Decision, agent: str) -> dict[str, Any]:
    output: dict[str, Any] = {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": decision.message or "loopfuse refused this call.",
        }
    }
    if decision.escalate:
        output["continue_"] = False
        output["stopReason"] = str(abort_error(guard, decision, agent))
        output["systemMessage"] = output["stopReason"]
    return output


def _exempt(guard: Guard, tool: str) -> bool:
    """Claude Code spells built-in tools ``TodoWrite``; the guard's exempt list ``todo_write``."""
    return tool != normalize_name(tool) and normalize_name(tool) in guard.config.circuit_breaker.exempt
