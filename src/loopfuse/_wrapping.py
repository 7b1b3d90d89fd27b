"""Guarding plain callables, sync or async, with one code path for the arguments."""

from __future__ import annotations

import contextlib
import contextvars
import functools
import inspect
import itertools
import weakref
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, TypeVar, cast

from .errors import LoopAbortedError

if TYPE_CHECKING:
    from .decision import Decision
    from .guard import Guard

__all__ = [
    "CURRENT_SESSION",
    "abort_error",
    "agent_session",
    "agent_text",
    "call_arguments",
    "current_agent",
    "guarded",
    "refusal_text",
    "run_before",
    "warned",
    "wrapped_arguments",
    "wrapped_tool",
]

F = TypeVar("F", bound=Callable[..., Any])
DEFAULT_AGENT = "default"


class _CurrentSession:
    """``Guard.wrap``'s default ``agent``: whoever ``agent_session`` names when the call
    runs, else ``"default"`` (one agent for the whole process)."""

    def __repr__(self) -> str:
        return "<the current agent_session, else 'default'>"


CURRENT_SESSION: Any = _CurrentSession()
_session: contextvars.ContextVar[Any] = contextvars.ContextVar(
    "loopfuse_agent_session", default=DEFAULT_AGENT
)


@contextlib.contextmanager
def agent_session(agent: Any) -> Iterator[None]:
    """Within the block, functions guarded with ``Guard.wrap`` and no ``agent=`` count for
    ``agent``: in this thread, and in the asyncio tasks and ``asyncio.to_thread`` calls
    started inside the block (they copy the context). Sessions nest; ``agent=`` wins."""
    token = _session.set(agent)
    try:
        yield
    finally:
        _session.reset(token)


def current_agent(agent: Any) -> Any:
    """``agent``, or the current session's agent when it is ``CURRENT_SESSION``."""
    return _session.get() if agent is CURRENT_SESSION else agent


def call_arguments(fn: Callable[..., Any]) -> Callable[[tuple[Any, ...], dict[str, Any]], dict[str, Any]]:
    """A function mapping a call's positional and keyword arguments to ``{name: value}``.

    Positional and keyword spellings of the same call give the same mapping, and so
    do a call leaving a parameter to its default and one passing the default.
    """
    try:
        signature: inspect.Signature | None = inspect.signature(fn)
    except (TypeError, ValueError):
        signature = None

    def arguments(args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
        if signature is not None:
            try:
                bound = signature.bind(*args, **kwargs)
                bound.apply_defaults()
                return dict(bound.arguments)
            except TypeError:
                pass
        return {"args": list(args), "kwargs": kwargs}

    return arguments


def run_before(fn: F, before: Callable[[dict[str, Any]], Any]) -> F:
    """``fn`` preceded by ``before(arguments)``; a non-None answer replaces the result.

    The wrapper is async when ``fn`` is, and ``fn`` never runs when ``before`` answers.
    """
    arguments = call_arguments(fn)
    if inspect.iscoroutinefunction(fn):

        @functools.wraps(fn)
        async def async_wrapper(*args: Any, **kwargs: Any) -> Any:
            refusal = before(arguments(args, kwargs))
            if refusal is not None:
                return refusal
            return await fn(*args, **kwargs)

        return cast(F, async_wrapper)

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        refusal = before(arguments(args, kwargs))
        if refusal is not None:
            return refusal
        return fn(*args, **kwargs)

    return cast(F, wrapper)


def wrapped_tool(fn: Any) -> str:
    """The tool name ``Guard.wrap`` gives ``fn`` without ``tool=``: its ``__name__``, a
    ``functools.partial``'s function's, else its class name (a callable object)."""
    while isinstance(fn, functools.partial):
        fn = fn.func
    name = getattr(fn, "__name__", None)
    return name if type(name) is str and name else type(fn).__name__


def guarded(fn: F, guard: Guard, tool: str, agent: Any) -> F:
    """``fn`` behind ``guard``: a denial returns its text, an escalation raises; what the
    call returned (or raised) is reported with ``record_result``, as the adapters do, and an
    allowed call's warning is added to what it returns (``warned``). A ``staticmethod`` or
    ``classmethod`` is guarded inside; ``fn`` guarded by ``guard`` already is returned as is."""
    if isinstance(fn, staticmethod | classmethod):
        return cast(F, type(fn)(guarded(fn.__func__, guard, tool, agent)))
    _check_wrappable(fn)
    if getattr(fn, _GUARDED_BY, None) is guard:
        return fn
    wrapper = _guarded(fn, guard, tool, agent, wrapped_arguments(fn))
    setattr(wrapper, _GUARDED_BY, guard)
    return wrapper


_GUARDED_BY = "__loopfuse_guard__"


def _check_wrappable(fn: Any) -> None:
    """``TypeError`` for what ``Guard.wrap`` cannot guard: what is not callable, a class, a
    generator function (its caller iterates: a denial's text cannot reach it)."""
    if not callable(fn):
        raise TypeError(f"Guard.wrap needs a callable, not an object of type {type(fn).__name__}")
    if isinstance(fn, type):
        raise TypeError(f"Guard.wrap guards functions, not the class {fn.__name__}: wrap its method")
    if inspect.isgeneratorfunction(fn) or inspect.isasyncgenfunction(fn):
        raise TypeError(
            f"Guard.wrap cannot guard the generator function {wrapped_tool(fn)}: wrap a function "
            "that returns its whole result"
        )


def wrapped_arguments(fn: Any) -> Callable[[tuple[Any, ...], dict[str, Any]], dict[str, Any]]:
    """``call_arguments`` for ``Guard.wrap``: a partial's frozen arguments are the call's, and
    the instance a method is called on is part of the call (``self``: its class and identity,
    also for a function written with ``self`` in a class body)."""
    if isinstance(fn, functools.partial):
        inner, frozen, keywords = wrapped_arguments(fn.func), fn.args, fn.keywords
        return lambda args, kwargs: inner((*frozen, *args), {**keywords, **kwargs})
    arguments = call_arguments(fn)
    if inspect.ismethod(fn):
        owner = _instance(fn.__self__)
        return lambda args, kwargs: {**arguments(args, kwargs), "self": owner}
    first = _method_parameter(fn)
    if first is None:
        return arguments

    def method_arguments(args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
        bound = arguments(args, kwargs)
        if first in bound:
            bound[first] = _instance(bound[first])
        return bound

    return method_arguments


def _method_parameter(fn: Any) -> str | None:
    """``self`` or ``cls`` when ``fn`` is written in a class body with it as first parameter."""
    owner, _, _ = getattr(fn, "__qualname__", "").rpartition(".")
    if not owner or owner.endswith("<locals>"):
        return None
    try:
        first = next(iter(inspect.signature(fn).parameters), None)
    except (TypeError, ValueError):
        return None
    return first if first in ("self", "cls") else None


def _instance(owner: Any) -> str:
    """What names a method's instance in its call: its class, and the instance's identity
    (two objects are two, the same object calling again is one); a class by its name."""
    kind = type(owner)  # never the object's own __class__, which may raise
    if issubclass(kind, type):
        return f"{owner.__module__}.{owner.__qualname__}"
    return f"{kind.__module__}.{kind.__qualname__}#{_serial(owner)}"


_serials: dict[int, tuple[weakref.ref[Any], int]] = {}  # id -> (the living object, its number)
_numbers = itertools.count(1)


def _serial(owner: Any) -> int:
    """A number for ``owner`` no other object ever gets, even one made at its address after it
    is gone (its entry goes with it); its id when it takes no weak reference."""
    key = id(owner)
    entry = _serials.get(key)
    if entry is not None and entry[0]() is owner:
        return entry[1]
    try:
        ref = weakref.ref(owner, lambda _, key=key: _serials.pop(key, None))  # type: ignore[misc]
    except TypeError:
        return key
    number = next(_numbers)
    _serials[key] = (ref, number)
    return number


def _guarded(fn: F, guard: Guard, tool: str, agent: Any, arguments: Callable[..., dict[str, Any]]) -> F:
    if _is_async(fn):

        @functools.wraps(fn)
        async def async_wrapper(*args: Any, **kwargs: Any) -> Any:
            who, bound = current_agent(agent), arguments(args, kwargs)
            decision = await guard.acheck(tool, bound, who)
            refusal = refusal_text(decision, who, guard)
            if refusal is not None:
                return refusal
            try:
                result = await fn(*args, **kwargs)
            except Exception as exc:
                await guard.arecord_result(tool, bound, agent=who, error=exc)
                raise
            await guard.arecord_result(tool, bound, result, who, ok=True)
            return warned(result, decision)

        return cast(F, async_wrapper)

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        who, bound = current_agent(agent), arguments(args, kwargs)
        decision = guard.check(tool, bound, who)
        refusal = refusal_text(decision, who, guard)
        if refusal is not None:
            return refusal
        try:
            result = fn(*args, **kwargs)
        except Exception as exc:
            guard.record_result(tool, bound, agent=who, error=exc)
            raise
        guard.record_result(tool, bound, result, who, ok=True)
        return warned(result, decision)

    return cast(F, wrapper)


def _is_async(fn: Any) -> bool:
    """Whether calling ``fn`` gives a coroutine: an async function, or an object whose class's
    ``__call__`` is one."""
    call = None if inspect.isroutine(fn) else type(fn).__call__  # fn is callable
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(call)


def warned(result: Any, decision: Decision) -> Any:
    """``result``, with the decision's warning added the way the adapters add it
    (``loopfuse.adapters._common.with_warning``)."""
    if decision.warning is None:
        return result
    from .adapters._common import with_warning  # the adapters import this module

    return with_warning(result, decision.warning)


def refusal_text(decision: Decision, agent: Any, guard: Guard) -> str | None:
    """None when allowed; the denial text; raises ``LoopAbortedError`` on escalation."""
    if decision.allowed:
        return None
    if decision.escalate:
        raise abort_error(guard, decision, agent)
    return decision.message


def abort_error(guard: Guard, decision: Decision, agent: Any) -> LoopAbortedError:
    """The error naming the loop that made ``decision`` escalate (no argument values)."""
    return LoopAbortedError(
        agent=agent_text(agent),
        tool=decision.tool,
        denials=guard.config.guard.abort_after_denials or 0,
        kind=decision.kind,
    )


def agent_text(agent: Any) -> str:
    """``str(agent)``, or its type's name when its ``__str__`` raises."""
    try:
        return str(agent)
    except Exception:
        return f"<{type(agent).__name__}>"
