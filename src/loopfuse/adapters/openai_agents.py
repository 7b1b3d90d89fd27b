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

Scope: the run (the SDK has no run id; a token on the run's usage object, shared by the run's
context wrappers and kept by the copy a run interrupted for an approval resumes from, stands
for it) and the agent making the call, so a handoff's target keeps its
own state; each invocation of an agent used as a tool (``Agent.as_tool``) is a run of its own,
whose state goes when it returns (the SDK hands it the parent's usage object: ``guard_agent``
wraps the tool's invoker to mark the invocation). ``share_subagents=True`` counts every
invocation of such an agent in one state per run instead. Parallel tool calls of one turn are checked in the
order the SDK starts them; the guard's lock keeps counts exact. Each call is checked with
``round=`` the number of the agent's model call whose response issued it (counted in
``on_llm_start``), so identical calls of one response count once.

A call the SDK answers with its failure text (``failure_error_function``: the tool raised, or
its arguments were not valid JSON for it) is reported as an error (``ok=False``, the exception's
type and message), so ``same_error`` sees it; the text the model reads is the SDK's own.
``guard_agent`` learns of it from the handled-error callback of the SDK's failure-handling
invoker (an SDK without one: reported as a plain result). A tool, MCP server or agent
takes one guard: guarding it again with another raises ``ValueError``.

Warnings: the output guardrail answers an allowed call that carries a warning with
``reject_content``, whose text is the tool's output (``str`` of it when not a str) followed by
the warning: the model reads both as the tool's output.
"""

from __future__ import annotations

import contextlib
import functools
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

from .._untrusted import error_text
from ..errors import LoopAbortedError
from ..guard import Guard
from ..incidents import logger
from ._common import HostLimit, InvalidTurns, PendingWarnings, Scope, ScopeTable, stop_error, with_warning
from ._openai_agents_runs import INVOCATION, Invocation, run_of
from ._openai_agents_sandbox import guard_capabilities

__all__ = ["LoopfuseInputGuardrail", "LoopfuseOutputGuardrail", "guard_agent", "invalid_turn_formatter"]

_RUN = "the run"  # the ScopeTable key of a run's own scope (the agent it calls the model for)
# What the SDK's failure-handling invoker awaits: for an agent tool, the nested run.
_IMPL = "_invoke_tool_impl"
_NESTING = "_loopfuse_own_runs"  # marks an agent tool's invoker wrapped to run each invocation apart
_HANDLED = "_on_handled_error"  # what the SDK's failure-handling invoker calls once it answered an error


class LoopfuseInputGuardrail(ToolInputGuardrail[Any]):
    """Checks each call with the guard before the tool runs."""


class LoopfuseOutputGuardrail(ToolOutputGuardrail[Any]):
    """Tells the guard what a call that ran returned."""


def guard_agent(
    agent: Agent[Any],
    guard: Guard,
    *,
    max_turns: int | None = DEFAULT_MAX_TURNS,
    share_subagents: bool = False,
) -> Agent[Any]:
    """Put ``guard`` in front of every tool call ``agent`` (and agents it reaches) can make.

    ``max_turns`` is what you pass ``Runner.run`` (the SDK's default otherwise), used only to
    warn when the SDK would end a looping run before the guard's clean stop. Each invocation of
    an agent used as a tool has its own state unless ``share_subagents`` (once an agent tool
    is guarded without it, it stays so)."""
    HostLimit(guard, "OpenAI Agents SDK").check("max_turns", max_turns)
    _guard_tree(agent, _runs_of(guard), share_subagents)
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
        self.invalid_turns = InvalidTurns()  # by the agent's model call (round_of)
        self.failures: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()
        self.guardrails = (_input_guardrail(self), _output_guardrail(self))

    def scope(self, usage: Any, agent_name: str) -> Scope | str:
        """The run's usage object stands for the run (the SDK has no run id), an agent tool's
        invocation for the run it makes."""
        return self.scopes.get(run_of(usage), f"agent {agent_name}")

    def model_call(self, usage: Any, agent: Any) -> None:
        """The run calls the model for ``agent``: remember it, or stop the run if the agent's
        invalid turns escalated."""
        name = str(getattr(agent, "name", "?"))
        run = self.scopes.get(run_of(usage), _RUN)
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

    def failed(self, context: Any, error: Exception) -> None:
        """The SDK answered the call of ``context`` with its failure text: keep the error (as
        text: an exception's traceback would keep the context alive) for the output guardrail."""
        with contextlib.suppress(TypeError):  # a context that cannot be weakly keyed: a plain result
            self.failures[context] = error_text(error)

    async def invalid_turn(self, usage: Any) -> str | None:
        """Report an invalid turn of the agent the run last called the model for (once for all
        the calls of missing tools of one of its responses); the text to answer it with when
        denied, else None."""
        run = self.scopes.get(run_of(usage), _RUN)
        scope = self.scope(usage, self.current.get(run, "?") if isinstance(run, Scope) else "?")
        decision = await self.invalid_turns.anote(self.guard, scope, self.round_of(scope), "unknown tool")
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


def _own_runs(tool: FunctionTool) -> None:
    """Make each invocation of an agent used as a tool a run of its own: its invoker's
    implementation (which runs the nested ``Runner.run``) sets ``INVOCATION`` around it, and
    the tasks the nested run starts inherit it. An SDK without that implementation: shared."""
    invoker = tool.on_invoke_tool
    impl = getattr(invoker, _IMPL, None)
    if not callable(impl) or getattr(impl, _NESTING, False):
        return

    @functools.wraps(impl)
    async def each_invocation_apart(context: Any, arguments: str) -> Any:
        token = INVOCATION.set(Invocation())
        try:
            return await impl(context, arguments)
        finally:
            INVOCATION.reset(token)

    setattr(each_invocation_apart, _NESTING, True)
    with contextlib.suppress(AttributeError):  # an invoker that does not take it: shared
        setattr(invoker, _IMPL, each_invocation_apart)


def _guard_tree(agent: Any, runs: _Runs, share_subagents: bool) -> None:
    """Hook every agent ``agent`` reaches and attach the guardrails to their tools and MCP
    servers, after checking them all: a ``ValueError`` leaves everything as it was."""
    agents: list[Any] = []
    targets: list[Any] = []
    _collect(agent, agents, targets)
    for each in [*agents, *targets]:
        _check_unguarded_by_others(each, runs)
    for each in agents:
        if not isinstance(each.hooks, _LoopfuseHooks):
            each.hooks = _LoopfuseHooks(runs, each.hooks)
        guard_capabilities(each, lambda tool: _attach(tool, runs), runs)
    for target in targets:
        if not share_subagents and getattr(target, "_agent_instance", None) is not None:
            _own_runs(target)
        _attach(target, runs)


def _collect(agent: Any, agents: list[Any], targets: list[Any]) -> None:
    """The agents ``agent`` reaches (itself, handoffs, agents used as tools, recursively) and
    their function tools and MCP servers."""
    if not isinstance(agent, Agent) or any(agent is seen for seen in agents):
        return
    agents.append(agent)
    for tool in agent.tools:
        if isinstance(tool, FunctionTool):
            targets.append(tool)
            _collect(getattr(tool, "_agent_instance", None), agents, targets)
        elif type(tool).__name__ in _RUN_HERE_UNGUARDED:
            logger.warning(
                "loopfuse: tool %r of agent %r (a %s) is not guarded: the guard sees function tools "
                "and MCP servers",
                getattr(tool, "name", "?"),
                getattr(agent, "name", "?"),
                type(tool).__name__,
            )
    targets.extend(agent.mcp_servers)
    for handoff in agent.handoffs:
        _collect(_handoff_agent(handoff), agents, targets)


# The SDK's tools it runs in this process without tool guardrails (hosted tools run at OpenAI's).
_RUN_HERE_UNGUARDED = frozenset(
    {"ApplyPatchTool", "ComputerTool", "CustomTool", "LocalShellTool", "ShellTool"}
)


def _check_unguarded_by_others(target: Any, runs: _Runs) -> None:
    """Raise ``ValueError`` if another guard's hooks or guardrails are on ``target`` (an agent,
    a function tool or an MCP server): checked before anything is changed."""
    if isinstance(target, Agent):
        hooks = target.hooks
        if isinstance(hooks, _LoopfuseHooks) and hooks.runs is not runs:
            raise _guarded_by_another("agent", target, "(and each tool, handoff and MCP server it reaches)")
        return
    for guardrail in target.tool_input_guardrails or []:
        if isinstance(guardrail, LoopfuseInputGuardrail) and guardrail is not runs.guardrails[0]:
            what = "tool" if isinstance(target, FunctionTool) else "MCP server"
            raise _guarded_by_another(what, target, "(even one shared by several agents)")


def _guarded_by_another(what: str, target: Any, scope: str) -> ValueError:
    name = str(getattr(target, "name", "?"))
    return ValueError(
        f"guard_agent: {what} {name!r} is already guarded by another Guard; one {what} {scope} takes one guard"
    )


def _attach(target: Any, runs: _Runs) -> None:
    """Add the guard's guardrails to a function tool or MCP server, once."""
    inputs = list(target.tool_input_guardrails or [])
    if any(guardrail is runs.guardrails[0] for guardrail in inputs):
        return
    target.tool_input_guardrails = [*inputs, runs.guardrails[0]]
    target.tool_output_guardrails = [*(target.tool_output_guardrails or []), runs.guardrails[1]]
    if isinstance(target, FunctionTool):
        _watch_failures(target, runs)


def _watch_failures(tool: FunctionTool, runs: _Runs) -> None:
    """Learn which calls of ``tool`` the SDK answered with its failure text: its invoker calls
    its handled-error callback after ``failure_error_function`` turned the error into the
    output (never when that function is None and the error is raised), before the output
    guardrails run. The SDK's callback still runs; copies of the tool keep the wrapper."""
    invoker = tool.on_invoke_tool
    sdk_callback = getattr(invoker, _HANDLED, None)
    if not callable(sdk_callback):
        return

    def on_handled_error(function_tool: Any, error: Exception, input_json: str, context: Any) -> None:
        runs.failed(context, error)
        sdk_callback(function_tool, error, input_json, context)

    setattr(invoker, _HANDLED, on_handled_error)


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
        error = runs.failures.pop(data.context, None)
        ok = None if error is None else False
        await runs.guard.arecord_result(tool, args, data.output, scope, ok=ok, error=error)
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
