"""OpenAI Agents SDK: the guard as a tool input guardrail. Needs ``pip install 'loopfuse[openai-agents]'``.

``guard_agent(agent, guard)`` attaches one guardrail to every function tool of the agent,
of the agents it hands off to and of the agents it uses as tools (recursively), and to
its MCP servers. A denied call is answered with ``reject_content`` (the model reads the
denial text as the tool's output; the tool does not run). Once the guard escalates the
guardrail answers ``raise_exception``: ``Runner.run`` raises
``ToolInputGuardrailTripwireTriggered`` whose ``output.output_info`` is the
``LoopAbortedError`` naming the loop.

Calls of tools that do not exist: by default the SDK ends the run at the first
(``ModelBehaviorError``). With ``RunConfig(tool_not_found_behavior="return_error_to_model",
tool_error_formatter=invalid_turn_formatter(guard))`` each is reported as an invalid turn
(``Guard.note_invalid``): the SDK's "not found" text reaches the model until the guard denies,
then the denial text does, and once the streak escalates the run stops before its next model
call with the same ``ToolInputGuardrailTripwireTriggered``. ``guard_agent`` wraps each agent's
``hooks`` (its own hooks still run) to know which agent a run is calling the model for.

Scope: the run (the SDK has no run id; the run's usage object, shared by the run's
context wrappers, stands for it) and the agent making the call, so handoffs and agents
used as tools keep their own state. Parallel tool calls of one turn are checked in the
order the SDK starts them; the guard's lock keeps counts exact. Each call is checked with
``round=`` the number of the agent's model call whose response issued it (counted in
``on_llm_start``), so identical calls of one response count once.

Warnings: the output guardrail answers an allowed call that carries a warning with
``reject_content``, whose text is the tool's output (``str`` of it when not a str) followed by
the warning: the model reads both as the tool's output.
"""

from __future__ import annotations

import inspect
import json
import weakref
from typing import Any

try:
    from agents import Agent, AgentHooks, FunctionTool
    from agents.exceptions import ToolInputGuardrailTripwireTriggered
    from agents.run import DEFAULT_MAX_TURNS
    from agents.run_config import ToolErrorFormatter, ToolErrorFormatterArgs
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

from ..errors import LoopAbortedError
from ..guard import Guard
from ._common import HostLimit, PendingWarnings, Scope, ScopeTable, stop_error, with_warning

__all__ = ["LoopfuseInputGuardrail", "LoopfuseOutputGuardrail", "guard_agent", "invalid_turn_formatter"]

_RUN = "the run"  # the ScopeTable key of a run's own scope (the agent it calls the model for)


class LoopfuseInputGuardrail(ToolInputGuardrail[Any]):
    """Checks each call with the guard before the tool runs."""


class LoopfuseOutputGuardrail(ToolOutputGuardrail[Any]):
    """Tells the guard what a call that ran returned."""


def guard_agent(agent: Agent[Any], guard: Guard, *, max_turns: int | None = DEFAULT_MAX_TURNS) -> Agent[Any]:
    """Put ``guard`` in front of every tool call ``agent`` (and agents it reaches) can make.

    ``max_turns`` is what you pass ``Runner.run`` (the SDK's default otherwise), used only to
    warn when the SDK would end a looping run before the guard's clean stop."""
    HostLimit(guard, "OpenAI Agents SDK").check("max_turns", max_turns)
    _guard_tree(agent, _runs_of(guard), seen=set())
    return agent


def invalid_turn_formatter(guard: Guard, then: ToolErrorFormatter | None = None) -> ToolErrorFormatter:
    """A ``RunConfig.tool_error_formatter`` that reports each call of a tool that does not exist
    (``tool_not_found_behavior="return_error_to_model"``) to ``guard`` as an invalid turn of the
    agent ``guard_agent`` saw calling the model, and answers it with the denial text once
    the guard denies. Other errors, and allowed invalid turns, go to ``then`` (None: the SDK's text)."""
    runs = _runs_of(guard)

    async def loopfuse_tool_error(args: ToolErrorFormatterArgs[Any]) -> str | None:
        if args.kind == "tool_not_found":
            denial = await runs.invalid_turn(args.run_context.usage)
            if denial is not None:
                return denial
        answer = then(args) if then is not None else None
        return await answer if inspect.isawaitable(answer) else answer

    return loopfuse_tool_error


class _Runs:
    """What one guard keeps for the agents it guards: a scope per run and agent, the agent each
    run is calling the model for, and stops waiting for a run's next model call."""

    def __init__(self, guard: Guard) -> None:
        self.guard = guard
        self.scopes = ScopeTable("openai-agents")
        self.current: weakref.WeakKeyDictionary[Scope, str] = weakref.WeakKeyDictionary()
        self.stops: weakref.WeakKeyDictionary[Scope, LoopAbortedError] = weakref.WeakKeyDictionary()
        self.turns: weakref.WeakKeyDictionary[Scope, int] = weakref.WeakKeyDictionary()
        self.warnings = PendingWarnings()
        self.guardrails = (_input_guardrail(self), _output_guardrail(self))

    def scope(self, usage: Any, agent_name: str) -> Scope | str:
        """The run's usage object stands for the run (the SDK has no run id)."""
        return self.scopes.get(usage, f"agent {agent_name}")

    def model_call(self, usage: Any, agent: Any) -> None:
        """The run calls the model for ``agent``: remember it, or stop the run if the agent's
        invalid turns escalated."""
        name = str(getattr(agent, "name", "?"))
        run = self.scopes.get(usage, _RUN)
        if isinstance(run, Scope):
            self.current[run] = name
        scope = self.scope(usage, name)
        if isinstance(scope, Scope):
            self.turns[scope] = self.turns.get(scope, 0) + 1
        stop = self.stops.pop(scope, None) if isinstance(scope, Scope) else None
        if stop is not None:
            output = ToolGuardrailFunctionOutput.raise_exception(output_info=stop)
            raise ToolInputGuardrailTripwireTriggered(self.guardrails[0], output)

    def round_of(self, scope: Scope | str) -> int | None:
        """The number of the agent's model call whose response issued the calls now checked."""
        return self.turns.get(scope) if isinstance(scope, Scope) else None

    async def invalid_turn(self, usage: Any) -> str | None:
        """Report an invalid turn of the agent the run last called the model for; the text
        to answer it with when denied, else None."""
        run = self.scopes.get(usage, _RUN)
        scope = self.scope(usage, self.current.get(run, "?") if isinstance(run, Scope) else "?")
        decision = await self.guard.anote_invalid(scope, reason="unknown tool")
        if decision.allowed:
            return None
        if decision.escalate and isinstance(scope, Scope):
            self.stops[scope] = stop_error(self.guard, decision, scope.name)
        return decision.message


_RUNS = "_loopfuse_openai_agents_runs"


def _runs_of(guard: Guard) -> _Runs:
    """The guard's ``_Runs``, kept on the guard itself: it lives exactly as long as the guard
    (a registry keyed by guard would keep every guard alive through its value)."""
    runs = getattr(guard, _RUNS, None)
    if not isinstance(runs, _Runs):
        runs = _Runs(guard)
        setattr(guard, _RUNS, runs)
    return runs


class _LoopfuseHooks(AgentHooks[Any]):
    """A guarded agent's ``hooks``: before each model call, ``_Runs.model_call``; every hook,
    that one included, also runs the agent's own hooks."""

    def __init__(self, runs: _Runs, inner: Any) -> None:
        self.runs = runs
        self.inner = inner

    async def on_llm_start(self, context: Any, agent: Any, system_prompt: Any, input_items: Any) -> None:
        self.runs.model_call(context.usage, agent)
        if self.inner is not None:
            await self.inner.on_llm_start(context, agent, system_prompt, input_items)

    def __getattribute__(self, name: str) -> Any:
        """Every other hook is the agent's own, so hooks the SDK adds later reach it too."""
        if name.startswith("on_") and name != "on_llm_start":
            inner = object.__getattribute__(self, "inner")
            if inner is not None:
                return getattr(inner, name)
        return object.__getattribute__(self, name)


def _guard_tree(agent: Any, runs: _Runs, seen: set[int]) -> None:
    if not isinstance(agent, Agent) or id(agent) in seen:
        return
    seen.add(id(agent))
    if not isinstance(agent.hooks, _LoopfuseHooks):
        agent.hooks = _LoopfuseHooks(runs, agent.hooks)
    for tool in agent.tools:
        if isinstance(tool, FunctionTool):
            _attach(tool, runs.guardrails)
            _guard_tree(getattr(tool, "_agent_instance", None), runs, seen)
    for server in agent.mcp_servers:
        _attach(server, runs.guardrails)
    for handoff in agent.handoffs:
        _guard_tree(_handoff_agent(handoff), runs, seen)


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


def _input_guardrail(runs: _Runs) -> LoopfuseInputGuardrail:
    guard = runs.guard

    async def loopfuse_check(data: ToolInputGuardrailData) -> ToolGuardrailFunctionOutput:
        tool, args, scope = _call_of(data, runs)
        decision = await guard.acheck(tool, args, scope, round=runs.round_of(scope))
        if decision.allowed:
            runs.warnings.put((scope, data.context.tool_call_id), decision.warning)
            return ToolGuardrailFunctionOutput.allow()
        if decision.escalate:
            error = stop_error(guard, decision, _label(scope))
            return ToolGuardrailFunctionOutput.raise_exception(output_info=error)
        return ToolGuardrailFunctionOutput.reject_content(decision.message or "", output_info=decision)

    return LoopfuseInputGuardrail(guardrail_function=loopfuse_check, name="loopfuse")


def _output_guardrail(runs: _Runs) -> LoopfuseOutputGuardrail:
    async def loopfuse_record(data: ToolOutputGuardrailData) -> ToolGuardrailFunctionOutput:
        tool, args, scope = _call_of(data, runs)
        await runs.guard.arecord_result(tool, args, data.output, scope)
        warning = runs.warnings.pop((scope, data.context.tool_call_id))
        if warning is None:
            return ToolGuardrailFunctionOutput.allow()
        output = data.output if isinstance(data.output, str) else str(data.output)
        return ToolGuardrailFunctionOutput.reject_content(with_warning(output, warning), output_info=warning)

    return LoopfuseOutputGuardrail(guardrail_function=loopfuse_record, name="loopfuse")


def _call_of(data: Any, runs: _Runs) -> tuple[str, Any, Scope | str]:
    context = data.context
    scope = runs.scope(context.usage, str(getattr(data.agent, "name", "?")))
    return context.tool_name, _arguments(context.tool_arguments), scope


def _arguments(raw: str) -> Any:
    """The call's arguments as JSON data; the raw text when it is not JSON."""
    try:
        return json.loads(raw) if raw else {}
    except (TypeError, ValueError):
        return raw


def _label(scope: Scope | str) -> str:
    return scope.name if isinstance(scope, Scope) else scope
