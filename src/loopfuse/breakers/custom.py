"""Your own breakers (``Guard(breakers=[...])``): checked when the guard is built, and kept
from switching the guard off once it runs.

An object that is not a breaker (no ``kind`` text, or no ``check``, ``record``, ``refused`` and
``observe`` methods) is a ``ConfigError`` at construction. A breaker that raises, or whose
``check`` returns something other than a ``Denial`` or None, is that breaker allowing the call
and recording nothing: the configured breakers still judge every call. The registry's own
classes, passed as your own, are used as they are (the Redis store evaluates them).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from .._calls import CallKey
from .._state import AgentState, ToolResult
from ..decision import Denial, Kind
from ..errors import ConfigError
from . import Breaker
from .registry import REGISTRY

__all__ = ["custom_breakers"]

_OPS = ("check", "record", "refused", "observe")
Failed = Callable[[str, Exception], None]


def custom_breakers(breakers: Iterable[Any], failed: Failed) -> tuple[Breaker, ...]:
    """``breakers`` checked, each one the guard does not know contained; ``failed(kind, exc)``
    hears of each exception one raises."""
    return tuple(_contained(_checked(b, i), failed) for i, b in enumerate(breakers))


def _checked(breaker: Any, index: int) -> Any:
    problem = _problem(breaker)
    if problem is None:
        return breaker
    raise ConfigError(
        f"breakers[{index}]: {type(breaker).__name__} is not allowed: expected a breaker (a `kind` "
        f"text and the methods {', '.join(_OPS)}); got {problem}"
    )


def _problem(breaker: Any) -> str | None:
    """Why ``breaker`` cannot be one; None when it can."""
    if isinstance(breaker, type):
        return "a class, not an instance of it"
    try:
        kind = getattr(breaker, "kind", None)
        missing = [op for op in _OPS if not callable(getattr(breaker, op, None))]
    except Exception:
        return "an object whose attributes raise"
    if missing:
        return f"an object without {', '.join(missing)}"
    return None if isinstance(kind, str) and kind else "an object without a `kind` text"


def _contained(breaker: Any, failed: Failed) -> Breaker:
    known: Breaker = breaker
    return known if type(breaker) in REGISTRY.values() else _Contained(breaker, failed)


class _Contained:
    """One of your breakers, whose exceptions are its own: it then allows and records nothing."""

    __slots__ = ("_breaker", "_failed", "awaits_results", "kind", "records")

    def __init__(self, breaker: Any, failed: Failed) -> None:
        self._breaker, self._failed = breaker, failed
        self.kind: Kind = breaker.kind  # a Kind to the type checker; your own name at run time
        self.records = _flag(breaker, "records", True)
        self.awaits_results = _flag(breaker, "awaits_results", False)

    def check(self, state: AgentState, call: CallKey) -> Denial | None:
        try:
            denial = self._breaker.check(state, call)
        except Exception as exc:
            self._failed(self.kind, exc)
            return None
        if denial is None or isinstance(denial, Denial):
            return denial
        self._failed(self.kind, TypeError(f"check returned a {type(denial).__name__}, not a Denial"))
        return None

    def record(self, state: AgentState, call: CallKey) -> None:
        self._run("record", state, call)

    def refused(self, state: AgentState, call: CallKey) -> None:
        self._run("refused", state, call)

    def observe(self, state: AgentState, call: CallKey, result: ToolResult) -> None:
        self._run("observe", state, call, result)

    def _run(self, op: str, *args: Any) -> None:
        try:
            getattr(self._breaker, op)(*args)
        except Exception as exc:
            self._failed(self.kind, exc)


def _flag(breaker: Any, name: str, default: bool) -> bool:
    try:
        return bool(getattr(breaker, name, default))
    except Exception:  # an attribute that raises: as if it were not set
        return default
