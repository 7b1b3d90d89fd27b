"""OpenAI Agents SDK: the guard as a tool input guardrail. Needs ``pip install 'loopfuse[openai-agents]'``.

``guard_agent(agent, guard)`` attaches one guardrail to every function tool of the agent,
of the agents it hands off to and of the agents it uses as tools (recursively), and to
its MCP servers. A denied call is answered with ``reject_content`` (the model reads the
denial text as the tool's output; the tool does not run). Once the guard escalates the
guardrail answers ``raise_exception``: ``Runner.run`` raises
``ToolInputGuardrailTripwireTriggered`` whose ``output.output_info`` is the
``LoopAbortedError`` naming the loop.

Scope: the run (the SDK has no run id; the run's usage object, shared by the run's
context wrappers, stands for it) and the agent making the call, so handoffs and agents
used as tools keep their own state. Parallel tool calls of one turn are checked in the
order the SDK starts them; the guard's lock keeps counts exact.
"""

from __future__ import annotations

import json
from typing import Any

try:
    from agents import Agent, FunctionTool
    from agents.tool_guardrails import (
        ToolGuardrailFunctionOutput,
        ToolInputGuardrail,
        ToolInputGuardrailData,
        ToolOutputGuardrail,
        ToolOutputGuardrailData,
    )
except ImportError as exc:  # pragma: no cover - exercised in a subprocess test
    raise ImportError(
        "loopfuse.adapters.openai_agents needs the OpenAI Agents SDK: pip install 'loopfuse[openai-agents]'"
    ) from exc

from ..guard import Guard
from ._common import Scope, ScopeTable, abort_error

__all__ = ["LoopfuseInputGuardrail", "LoopfuseOutputGuardrail", "guard_agent"]


class LoopfuseInputGuardrail(ToolInputGuardrail[Any]):
    """Checks each call with the guard before the tool runs."""


class LoopfuseOutputGuardrail(ToolOutputGuardrail[Any]):
    """Tells the guard what a call that ran returned."""


def guard_agent(agent: Agent[Any], guard: Guard) -> Agent[Any]:
    """Put ``guard`` in front of every tool call ``agent`` (and agents it reaches) can make."""
    scopes = ScopeTable("openai-agents")
    pair = (_input_guardrail(guard, scopes), _output_guardrail(guard, scopes))
    _guard_tree(agent, pair, seen=set())
    return agent


def _guard_tree(agent: Any, pair: tuple[Any, Any], seen: set[int]) -> None:
    if not isinstance(agent, Agent) or id(agent) in seen:
        return
    seen.add(id(agent))
    for tool in agent.tools:
        if isinstance(tool, FunctionTool):
            _attach(tool, pair)
            _guard_tree(getattr(tool, "_agent_instance", None), pair, seen)
    for server in agent.mcp_servers:
        _attach(server, pair)
    for handoff in agent.handoffs:
        _guard_tree(_handoff_agent(handoff), pair, seen)


def _attach(target: Any, pair: tuple[Any, Any]) -> None:
    """Add the guardrails to a function tool or MCP server, once."""
    inputs = list(target.tool_input_guardrails or [])
    if any(isinstance(g, LoopfuseInputGuardrail) for g in inputs):
        return
    target.tool_input_guardrails = [*inputs, pair[0]]
    target.tool_output_guardrails = [*(target.tool_output_guardrails or []), pair[1]]


def _handoff_agent(handoff: Any) -> Any:
    if isinstance(handoff, Agent):
        return handoff
    ref = getattr(handoff, "_agent_ref", None)
    return ref() if ref is not None else None


def _input_guardrail(guard: Guard, scopes: ScopeTable) -> LoopfuseInputGuardrail:
    async def loopfuse_check(data: ToolInputGuardrailData) -> ToolGuardrailFunctionOutput:
        tool, args, scope = _call_of(data, scopes)
        decision = await guard.acheck(tool, args, scope)
        if decision.allowed:
            return ToolGuardrailFunctionOutput.allow()
        if decision.escalate:
            error = abort_error(guard, decision, _label(scope))
            return ToolGuardrailFunctionOutput.raise_exception(output_info=error)
        return ToolGuardrailFunctionOutput.reject_content(decision.message or "", output_info=decision)

    return LoopfuseInputGuardrail(guardrail_function=loopfuse_check, name="loopfuse")


def _output_guardrail(guard: Guard, scopes: ScopeTable) -> LoopfuseOutputGuardrail:
    async def loopfuse_record(data: ToolOutputGuardrailData) -> ToolGuardrailFunctionOutput:
        tool, args, scope = _call_of(data, scopes)
        await guard.arecord_result(tool, args, data.output, scope)
        return ToolGuardrailFunctionOutput.allow()

    return LoopfuseOutputGuardrail(guardrail_function=loopfuse_record, name="loopfuse")


def _call_of(data: Any, scopes: ScopeTable) -> tuple[str, Any, Scope | str]:
    context = data.context
    scope = scopes.get(context.usage, f"agent {getattr(data.agent, 'name', '?')}")
    return context.tool_name, _arguments(context.tool_arguments), scope


def _arguments(raw: str) -> Any:
    """The call's arguments as JSON data; the raw text when it is not JSON."""
    try:
        return json.loads(raw) if raw else {}
    except (TypeError, ValueError):
        return raw


def _label(scope: Scope | str) -> str:
    return scope.name if isinstance(scope, Scope) else scope
