"""The guard in front of a smolagents agent's tool calls.

smolagents has no pre-tool hook, so ``guard_agent`` gives the agent guarded copies of
its tools::

    agent = guard_agent(ToolCallingAgent(tools=[...], model=model), guard)
    agent.run("...")

A denied call does not run: the tool returns the denial text, which the model reads as
the observation. State is scoped to one run of one agent (each ``run`` with ``reset=True``
starts a fresh scope); a managed agent gets its own scope per delegation unless
``share_subagents=True``, when it shares its parent's run. Once an agent escalates, a step
callback raises ``LoopAbortedError`` (naming the loop) at the end of that step, which ends
``agent.run``; raised inside a managed agent it reaches the parent as a failed call.
Parallel tool calls of one turn (ToolCallingAgent's threads) are checked under the
guard's lock, in the order the threads reach their tools: counts stay exact.
"""

from __future__ import annotations

import copy
import itertools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..errors import LoopAbortedError
from ..wrapping import call_arguments
from ._common import abort_error, require

require("smolagents", "smolagents")

from smolagents.memory import ActionStep  # type: ignore[import-untyped]  # noqa: E402

if TYPE_CHECKING:
    from ..guard import Guard

__all__ = ["guard_agent"]

UNGUARDED = frozenset({"final_answer"})
_runs = itertools.count(1)


class _RunScope:
    """The guard identity of the agent's current run, and a pending stop."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.label = name
        self.abort: LoopAbortedError | None = None

    def new_run(self) -> None:
        self.label = f"{self.name}#{next(_runs)}"
        self.abort = None

    def raise_if_stopped(self, step: Any, agent: Any = None) -> None:
        if self.abort is not None:
            raise self.abort


def guard_agent(agent: Any, guard: Guard, *, share_subagents: bool = False) -> Any:
    """Put ``guard`` in front of every tool of ``agent`` and of its managed agents.

    Returns the same agent, changed in place. ``final_answer`` is not guarded.
    """
    scope = _RunScope(_name(agent))
    _restart_scope_on_run(agent, scope)
    _install(agent, guard, scope, share_subagents)
    return agent


def _install(agent: Any, guard: Guard, scope: _RunScope, share: bool) -> None:
    agent.step_callbacks.register(ActionStep, scope.raise_if_stopped)
    for name, tool in list(agent.tools.items()):
        if name not in UNGUARDED:
            agent.tools[name] = _guarded_tool(tool, guard, scope)
    for managed in getattr(agent, "managed_agents", {}).values():
        if share:
            _install(managed, guard, scope, share)
            continue
        own = _RunScope(_name(managed))
        _restart_scope_on_run(managed, own)
        _install(managed, guard, own, share)


def _restart_scope_on_run(agent: Any, scope: _RunScope) -> None:
    run = agent.run

    def guarded_run(task: str, *args: Any, **kwargs: Any) -> Any:
        if kwargs.get("reset", args[1] if len(args) > 1 else True):
            scope.new_run()
        return run(task, *args, **kwargs)

    agent.run = guarded_run


def _guarded_tool(tool: Any, guard: Guard, scope: _RunScope) -> Any:
    guarded = copy.copy(tool)
    forward: Callable[..., Any] = tool.forward
    arguments = call_arguments(forward)
    name = str(tool.name)

    def guarded_forward(*args: Any, **kwargs: Any) -> Any:
        call, agent = arguments(args, kwargs), scope.label
        decision = guard.check(name, call, agent)
        if not decision.allowed:
            if decision.escalate:
                scope.abort = abort_error(guard, decision, agent)
            return decision.message
        try:
            result = forward(*args, **kwargs)
        except Exception as exc:
            guard.record_result(name, call, type(exc).__name__, agent, ok=False)
            raise
        guard.record_result(name, call, result, agent, ok=True)
        return result

    guarded.forward = guarded_forward
    return guarded


def _name(agent: Any) -> str:
    return str(getattr(agent, "name", None) or type(agent).__name__)
