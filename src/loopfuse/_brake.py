"""The standalone loop brake: raise when the same call repeats too many times in a row."""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from ._calls import CallKey
from ._fork import fork_safe_lock
from ._untrusted import tool_name
from ._wrapping import agent_text, run_before
from .breakers import RepeatBreaker
from .checks import resolve_max_repeats
from .errors import LoopBrakeError
from .stores.memory import AgentRegistry

__all__ = ["LoopBrake", "decorate_tool", "wrap_execute"]

F = TypeVar("F", bound=Callable[..., Any])
_CALLABLE_NAMES = ("execute", "func", "fn", "function", "handler", "run", "invoke", "call")


class LoopBrake:
    """Refuse the identical call after ``max_repeats`` in a row, per session.

    ``max_repeats`` comes from the argument, else ``$LOOPFUSE_MAX_REPEATS``, else 3.
    With 3, calls 1-3 run and the 4th identical call in a row raises ``LoopBrakeError``,
    as does every further identical call until a different one arrives.
    """

    def __init__(
        self, max_repeats: int | None = None, *, max_sessions: int = 100_000, idle_seconds: float = 86_400.0
    ) -> None:
        self.max_repeats = resolve_max_repeats(max_repeats, "LoopBrake(max_repeats=...)")
        self._breaker = RepeatBreaker(self.max_repeats)
        self._sessions = AgentRegistry(1, max_sessions, idle_seconds)
        self._lock = fork_safe_lock()

    def check(self, tool: str, args: Any = None, session: Any = "default") -> None:
        """Record the call, or raise ``LoopBrakeError`` without recording it."""
        call = CallKey.of(tool, {} if args is None else args)
        if call is None:
            return
        with self._lock:
            state = self._sessions.get(session)
            if state is None:
                return
            denial = self._breaker.check(state, call)
            if denial is None:
                self._breaker.record(state, call)
                return
            self._breaker.refused(state, call)
        raise LoopBrakeError(
            tool_name=tool_name(tool) or f"<{type(tool).__name__}>",
            count=denial.count,
            max_repeats=self.max_repeats,
            hash_prefix=call.hash_prefix,
            session_id=agent_text(session),
        )

    def reset(self, session: Any = "default") -> None:
        """Forget the session's streak."""
        with self._lock:
            self._sessions.forget(session)


def wrap_execute(fn: F, brake: LoopBrake, *, tool: str, session_id: Any = "default") -> F:
    """``fn`` checked by ``brake`` first (async if ``fn`` is); ``fn`` never runs on a refusal."""

    def before(arguments: dict[str, Any]) -> None:
        brake.check(tool, _single_mapping(arguments), session_id)

    return run_before(fn, before)


def decorate_tool(tool: Any, brake: LoopBrake, *, session_id: Any = "default") -> Any:
    """A copy of a tool definition with its callable behind ``brake``; the original is untouched.

    ``tool`` is a mapping with ``name`` and a callable (``execute``, ``func``, ``fn``, ...),
    or an object with a ``name`` attribute and such a callable attribute.
    """
    is_mapping = isinstance(tool, Mapping)
    name = tool.get("name") if is_mapping else getattr(tool, "name", None)
    field = _callable_field(tool, is_mapping)
    if not isinstance(name, str) or field is None:
        raise TypeError("decorate_tool needs a tool with a string 'name' and a callable (e.g. 'execute')")
    fn = tool[field] if is_mapping else getattr(tool, field)
    wrapped = wrap_execute(fn, brake, tool=name, session_id=session_id)
    if is_mapping:
        return {**tool, field: wrapped}
    clone = copy.copy(tool)
    setattr(clone, field, wrapped)
    return clone


def _callable_field(tool: Any, is_mapping: bool) -> str | None:
    for field in _CALLABLE_NAMES:
        value = tool.get(field) if is_mapping else getattr(tool, field, None)
        if callable(value):
            return field
    return None


def _single_mapping(arguments: dict[str, Any]) -> Any:
    """A tool's execute(params) called with one mapping is identified by that mapping."""
    if len(arguments) == 1:
        (value,) = arguments.values()
        if isinstance(value, Mapping):
            return value
    return arguments
