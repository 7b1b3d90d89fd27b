"""The guard in front of the Claude Agent SDK's tool calls, as ``PreToolUse`` hooks.

::

    options = ClaudeAgentOptions(hooks=loopfuse_hooks(guard), ...)

The ``PreToolUse`` hook denies a repeated call with ``permissionDecision: "deny"``; the
CLI hands the model the reason as the tool's error result. State is scoped to the
session id, and inside a sub-agent to the session id plus the sub-agent's ``agent_id``
(pass ``share_subagents=True`` to give a session's sub-agents one shared state). Once an
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
    guard: Guard, *, matcher: str | None = None, share_subagents: bool = False
) -> dict[str, list[HookMatcher]]:
    """Hook configuration for ``ClaudeAgentOptions(hooks=...)``.

    ``matcher`` restricts the hooks to tool names matching it (all tools by default).
    To combine with hooks of your own, extend the lists of the returned mapping.
    """
    warnings = PendingWarnings()
    return {
        "PreToolUse": [HookMatcher(matcher=matcher, hooks=[_pre_tool_use(guard, share_subagents, warnings)])],
        "PostToolUse": [
            HookMatcher(matcher=matcher, hooks=[_post_tool_use(guard, share_subagents, True, warnings)])
        ],
        "PostToolUseFailure": [
            HookMatcher(matcher=matcher, hooks=[_post_tool_use(guard, share_subagents, False, warnings)])
        ],
    }


def scope_of(hook_input: Any, share_subagents: bool = False) -> str:
    """The guard's agent identity for a hook input: ``session`` or ``session/agent_id``."""
    session = str(hook_input.get("session_id") or "claude")
    agent_id = hook_input.get("agent_id")
    if agent_id and not share_subagents:
        return f"{session}/{agent_id}"
    return session


def _pre_tool_use(guard: Guard, share_subagents: bool, warnings: PendingWarnings) -> Hook:
    async def loopfuse_pre_tool_use(hook_input: Any, tool_use_id: str | None, context: Any) -> dict[str, Any]:
        tool = str(hook_input.get("tool_name", ""))
        if _exempt(guard, tool):
            return {}
        agent = scope_of(hook_input, share_subagents)
        decision = await guard.acheck(tool, hook_input.get("tool_input"), agent)
        if decision.allowed:
            warnings.put((agent, tool_use_id), decision.warning)
            return {}
        return _denial(guard, decision, agent)

    return loopfuse_pre_tool_use


def _post_tool_use(guard: Guard, share_subagents: bool, ok: bool, warnings: PendingWarnings) -> Hook:
    async def loopfuse_post_tool_use(
        hook_input: Any, tool_use_id: str | None, context: Any
    ) -> dict[str, Any]:
        tool = str(hook_input.get("tool_name", ""))
        result = hook_input.get("tool_response") if ok else hook_input.get("error")
        agent = scope_of(hook_input, share_subagents)
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
