"""The guard in front of a smolagents agent's tool calls.

smolagents has no pre-tool hook, so ``guard_agent`` gives the agent guarded copies of
its tools::

    agent = guard_agent(ToolCallingAgent(tools=[...], model=model), guard)
    agent.run("...")

A denied call does not run: the tool returns the denial text, which the model reads as
the observation (an image or audio tool's copy is of a subclass that keeps smolagents from
making the text a stored image). A call to a managed agent (a delegation) is guarded the same way, as a
call of the tool named after the managed agent with its ``task`` and ``additional_args``,
in the parent's scope: a denied delegation returns the denial text to the parent and the
managed agent does not run. Once an agent escalates, a step callback raises
``LoopAbortedError`` (naming the loop) at the end of that step, which ends ``agent.run``;
raised inside a managed agent it reaches the parent as a failed call. Parallel tool calls
of one turn (ToolCallingAgent's threads) are checked under the guard's lock, in the order
the threads reach their tools: counts stay exact. Each call is checked with ``round=`` the
agent's step (``_step_of``), so identical calls of one step count once; a ``CodeAgent``'s calls
have no round (its code makes them one after another), so each counts. An allowed call's
warning is added to a str, dict or list result (what the model reads as the observation);
any other value (a number or an image a CodeAgent's code computes with) is returned unchanged.

Invalid turns (``Guard.note_invalid``): a step that ended with a reply smolagents could not
parse, a call of a tool that does not exist, or arguments the tool's schema rejects. The
step callback reports it; from the ``[invalid] limit``-th in a row the guard's denial text
replaces the step's error text (what the model reads next), and escalation stops the run
as above. The agent's ``max_steps`` (and ``run(max_steps=...)``) is compared with the
guard's escalation point: a warning says when smolagents would end a loop first.

Scopes: each ``run`` starts a fresh scope and drops the state of the one it replaces, also
``run(..., reset=False)``, which continues the conversation (a chat's next message: the agent's
memory, not its counts). With ``share_conversation=True`` a ``reset=False`` run continues the
current scope with its state instead. A managed agent gets its own scope per delegation
(dropped when the delegation returns or raises) unless ``share_subagents=True``, when it shares
its parent's run. The last top-level scope is kept until the next run, or, with the in-memory
store, until the agent is garbage-collected.

``guard_agent`` is idempotent: guarding an agent again with the same guard changes
nothing; guarding it with a different guard raises ``ValueError``.
"""

from __future__ import annotations

import copy
import inspect
import itertools
import weakref
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .._process import process_number
from .._wrapping import call_arguments
from ..errors import LoopAbortedError
from ._common import HostLimit, Scope, require, stop_error, with_warning

require("smolagents", "smolagents")

from smolagents.agents import ToolCallingAgent  # type: ignore[import-untyped]  # noqa: E402
from smolagents.memory import ActionStep  # type: ignore[import-untyped]  # noqa: E402
from smolagents.utils import (  # type: ignore[import-untyped]  # noqa: E402
    AgentParsingError,
    AgentToolCallError,
    AgentToolExecutionError,
)

if TYPE_CHECKING:
    from ..guard import Guard

__all__ = ["guard_agent"]

UNGUARDED = frozenset({"final_answer"})
_INSTALLED = "_loopfuse_installed"
_runs = itertools.count(1)
_MEDIA_OUTPUTS = ("image", "audio")  # smolagents makes any value such a tool returns a media object
_TEXT_ON_DENIAL: dict[type[Any], type[Any]] = {}  # one per media tool class
_DENIAL: ContextVar[str | None] = ContextVar("loopfuse_smolagents_denial")  # set by a media tool's call


class _RunScope:
    """The guard identity of the agent's current run, and a pending stop.

    The label is a ``Scope`` object, not a string: the in-memory store drops its state
    when the agent holding this scope is collected.
    """

    def __init__(self, name: str, guard: Guard) -> None:
        self.name = name
        self.label = Scope(name)
        self.abort: LoopAbortedError | None = None
        self._guard = guard

    def new_run(self) -> None:
        """Start a fresh scope; the replaced one will never be continued, so its state goes."""
        self.end()
        self.label = Scope(
            f"{self.name}#{process_number() & 0xFFFFFF:06x}-{next(_runs)}"
        )  # its process's own
        self.abort = None

    def end(self) -> None:
        self._guard.forget(self.label)

    def stop(self, guard: Guard, decision: Any) -> None:
        self.abort = stop_error(guard, decision, self.label.name)

    def after_step(self, step: Any, agent: Any = None) -> None:
        """A step that ended with no usable tool call is an invalid turn; a denial replaces the
        error text the model reads next. Then stop the run if it escalated."""
        error: Any = getattr(step, "error", None)
        if _invalid_turn(error):
            decision = self._guard.note_invalid(self.label, reason=type(error).__name__)
            if decision.escalate:
                self.stop(self._guard, decision)
            elif not decision.allowed:
                error.args, error.message = (decision.message,), decision.message
        if self.abort is not None:
            raise self.abort


def _invalid_turn(error: Any) -> bool:
    """A reply that could not be parsed, a call of a tool that does not exist, or arguments
    the tool's schema rejects (none of them reached a tool)."""
    if isinstance(error, AgentParsingError | AgentToolCallError):
        return True
    return isinstance(error, AgentToolExecutionError) and str(error).startswith("Unknown tool ")


@dataclass(frozen=True)
class _Installed:
    guard: Guard
    scope: _RunScope
    limit: HostLimit


def guard_agent(
    agent: Any, guard: Guard, *, share_subagents: bool = False, share_conversation: bool = False
) -> Any:
    """Put ``guard`` in front of every tool of ``agent``, of its managed agents, and of
    its calls to them.

    Returns the same agent, changed in place. ``final_answer`` is not guarded. A second
    call with the same guard returns the agent unchanged (the options included); with
    another guard it raises ``ValueError``.
    """
    if not _already_guarded(agent, guard):
        _install_own_scope(agent, guard, share_subagents, share_conversation)
    return agent


def _already_guarded(agent: Any, guard: Guard) -> bool:
    installed = vars(agent).get(_INSTALLED)
    if installed is None:
        return False
    if installed.guard is not guard:
        raise ValueError(
            f"guard_agent: agent {_name(agent)!r} is already guarded by another Guard; "
            "one agent (and each of its managed agents) takes one guard"
        )
    return True


def _install_own_scope(agent: Any, guard: Guard, share: bool, continued: bool = False) -> _RunScope:
    scope = _RunScope(_name(agent), guard)
    _restart_scope_on_run(agent, scope, continued)
    _install(agent, guard, scope, share)
    return scope


def _install(agent: Any, guard: Guard, scope: _RunScope, share: bool) -> None:
    limit = HostLimit(guard, f"smolagents agent {_name(agent)!r}")
    limit.check("max_steps", getattr(agent, "max_steps", None))
    vars(agent)[_INSTALLED] = _Installed(guard, scope, limit)
    agent.step_callbacks.register(ActionStep, scope.after_step)
    step = _step_of(agent)
    for name, tool in list(agent.tools.items()):
        if name not in UNGUARDED:
            agent.tools[name] = _guarded_tool(tool, guard, scope, step)
    managed_agents = getattr(agent, "managed_agents", {})
    for name, managed in list(managed_agents.items()):
        own = _guard_managed(managed, guard, scope, share)
        managed_agents[name] = _GuardedDelegation(managed, guard, scope, own, step)


def _step_of(agent: Any) -> Callable[[], Any]:
    """The agent's current step, the round of the calls it issues: its name, the number of runs
    it began, ``step_number`` and the length of its memory (``step_number`` starts again in a
    continued run, and in each delegation to a managed agent, whose memory starts afresh). Holds
    the agent weakly (its tools hold this). None for any agent but a ``ToolCallingAgent``: a
    ``CodeAgent``'s calls run one after another in its code, not in parallel, and a loop in
    that code repeating one call must count every call."""
    if not isinstance(agent, ToolCallingAgent):
        return lambda: None
    ref, name = weakref.ref(agent), _name(agent)

    def step() -> Any:
        agent = ref()
        if agent is None:
            return None
        memory = getattr(getattr(agent, "memory", None), "steps", ())
        return name, vars(agent).get(_RUNS, 0), getattr(agent, "step_number", None), len(memory)

    return step


_RUNS = "_loopfuse_runs"  # how many runs an agent began: its steps start again at 1 in each


def _began_run(agent: Any) -> None:
    vars(agent)[_RUNS] = vars(agent).get(_RUNS, 0) + 1


def _guard_managed(managed: Any, guard: Guard, parent: _RunScope, share: bool) -> _RunScope:
    """The scope the managed agent runs in, guarding it first if it is not yet."""
    if _already_guarded(managed, guard):
        scope: _RunScope = vars(managed)[_INSTALLED].scope
        return scope
    if share:
        _install(managed, guard, parent, share)
        return parent
    return _install_own_scope(managed, guard, share)


def _restart_scope_on_run(agent: Any, scope: _RunScope, continued: bool) -> None:
    """Each run starts a new scope; with ``continued``, a ``reset=False`` run keeps the last."""
    run = agent.run

    def guarded_run(task: str, *args: Any, **kwargs: Any) -> Any:
        vars(agent)[_INSTALLED].limit.check("max_steps", kwargs.get("max_steps"))
        _began_run(agent)
        if not continued or kwargs.get("reset", args[1] if len(args) > 1 else True):
            scope.new_run()
        else:
            scope.abort = None  # a continuation keeps the counts; the stop was the last run's
        return run(task, *args, **kwargs)

    agent.run = guarded_run


def _guarded_tool(tool: Any, guard: Guard, scope: _RunScope, step: Callable[[], Any]) -> Any:
    """A copy of ``tool`` whose ``forward`` asks the guard first. The copy is what smolagents
    calls and sets up (``setup()`` on its first call), so its own ``forward`` runs."""
    guarded = copy.copy(tool)
    forward: Callable[..., Any] = tool.forward
    if getattr(forward, "__self__", None) is tool:
        forward = forward.__func__.__get__(guarded)  # type: ignore[attr-defined]
    arguments = _tool_arguments(tool, forward)
    name = str(tool.name)

    def guarded_forward(*args: Any, **kwargs: Any) -> Any:
        call = arguments(args, kwargs)
        return _guarded_call(guard, scope, name, call, lambda: forward(*args, **kwargs), step())

    guarded.forward = guarded_forward
    if getattr(tool, "output_type", None) in _MEDIA_OUTPUTS:
        guarded.__class__ = _text_on_denial(type(tool))
    return guarded


def _text_on_denial(kind: type[Any]) -> type[Any]:
    """``kind`` whose call answers a denial with its text: smolagents would make the text an
    image or audio object (a path), and the model would read "Stored 'image.png' in memory"."""
    if kind not in _TEXT_ON_DENIAL:
        _TEXT_ON_DENIAL[kind] = _subclass_answering_denials(kind)
    return _TEXT_ON_DENIAL[kind]


def _subclass_answering_denials(kind: type[Any]) -> type[Any]:
    def __call__(self: Any, *args: Any, **kwargs: Any) -> Any:
        token = _DENIAL.set(None)
        try:
            result = super(called, self).__call__(*args, **kwargs)
            return _DENIAL.get() or result
        finally:
            _DENIAL.reset(token)

    called: type[Any] = type(kind.__name__, (kind,), {"__call__": __call__, "__module__": kind.__module__})
    return called


def _tool_arguments(
    tool: Any, forward: Callable[..., Any]
) -> Callable[[tuple[Any, ...], dict[str, Any]], Any]:
    """The call as ``{input name: value}``: by ``forward``'s signature when it names the tool's
    inputs (defaults applied), else by the order of the tool's ``inputs``, as smolagents passes
    them (a ``@tool`` function's ``forward`` takes ``self`` first; one made from a LangChain tool
    takes ``*args, **kwargs``)."""
    names = tuple(getattr(tool, "inputs", None) or ())
    if not names or _parameters(forward) <= set(names):
        return call_arguments(forward)

    def arguments(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        return {**dict(zip(names, args, strict=False)), **kwargs}

    return arguments


def _parameters(fn: Callable[..., Any]) -> set[str]:
    """The names of ``fn``'s parameters; one no input can have when it has no signature."""
    try:
        return set(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        return {"*"}


def _guarded_call(
    guard: Guard, scope: _RunScope, name: str, call: Any, run: Callable[[], Any], round_id: Any
) -> Any:
    """``run()`` if the guard allows ``name(call)`` in ``scope``, else the denial text; an
    allowed call's warning is added to a str, dict or list result (``with_warning``)."""
    agent = scope.label
    decision = guard.check(name, call, agent, round=round_id)
    if not decision.allowed:
        if decision.escalate:
            scope.stop(guard, decision)
        if _DENIAL.get("") is None:  # in a media tool's call (``_text_on_denial``)
            _DENIAL.set(decision.message)
        return decision.message
    try:
        result = run()
    except Exception as exc:
        guard.record_result(name, call, agent=agent, error=exc)  # judged by its type and message
        raise
    guard.record_result(name, call, result, agent, ok=True)
    if isinstance(result, str | dict | list) or result is None:
        return with_warning(result, decision.warning)
    return result  # a value a CodeAgent's code computes with (a number, an image): unchanged


class _GuardedDelegation:
    """Stands for a managed agent in its parent's ``managed_agents``: the parent's call
    goes through the guard first. Everything else reaches the managed agent itself."""

    __slots__ = ("_guard", "_managed", "_own", "_parent", "_step")

    def __init__(
        self, managed: Any, guard: Guard, parent: _RunScope, own: _RunScope, step: Callable[[], Any]
    ) -> None:
        object.__setattr__(self, "_step", step)
        object.__setattr__(self, "_managed", managed)
        object.__setattr__(self, "_guard", guard)
        object.__setattr__(self, "_parent", parent)
        object.__setattr__(self, "_own", own)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        call = _delegation_arguments(args, kwargs)
        name = str(self._managed.name)
        run = lambda: self._delegate(*args, **kwargs)  # noqa: E731
        return _guarded_call(self._guard, self._parent, name, call, run, self._step())

    def _delegate(self, *args: Any, **kwargs: Any) -> Any:
        _began_run(self._managed)
        try:
            return self._managed(*args, **kwargs)
        finally:
            if self._own is not self._parent:
                self._own.end()  # a delegation is never continued

    # smolagents reads ``__class__.__name__`` to save and display agents: report the
    # managed agent's class, as ``unittest.mock`` does for a spec.
    @property  # type: ignore[misc]
    def __class__(self) -> type[Any]:
        return type(self._managed)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._managed, name)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self._managed, name, value)

    def __repr__(self) -> str:
        return f"<guarded delegation to {self._managed!r}>"


def _delegation_arguments(args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
    """``{"task": ..., "additional_args": ...}`` whether the task came by position or name."""
    call = dict(kwargs)
    if args:
        call["task"] = args[0]
    return {key: value for key, value in call.items() if value is not None}


def _name(agent: Any) -> str:
    return str(getattr(agent, "name", None) or type(agent).__name__)
