"""Your own breakers (``Guard(breakers=[...])``): checked when the guard is built, and kept
from switching the guard off once it runs.

An object that is not a breaker (no ``kind`` text, or no ``check``, ``record``, ``refused`` and
``observe`` methods) is a ``ConfigError`` at construction. A breaker that raises, or whose
``check`` returns something other than a ``Denial`` or None, is that breaker allowing the call
and recording nothing: the configured breakers still judge every call. The registry's own
classes, passed as your own, are used as they are (the Redis store evaluates them); one whose
kind the guard already has is a ``ConfigError``, since breakers of one kind share an agent's state,
and so is one built with a number or flag its section would refuse (``CallCap(-1)``).
So is a kind of yours that is not printable or is "store" or "invalid", and a ``deny_message``
under the kind of one of the guard's breakers (it would be that breaker's text too).
On Redis yours run as their Lua fragment (``lua_file``): the store reads it off ``own_breaker``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from .._calls import CallKey
from .._state import AgentState, ToolResult
from .._vocabulary import KIND_SECTIONS
from ..checks import TEMPLATE_ALLOWED, template_problem
from ..decision import Denial, Kind
from ..errors import ConfigError
from . import Breaker
from ._hand_built import checked_as_configured
from .registry import REGISTRY

__all__ = ["custom_breakers", "custom_messages", "own_breaker"]

_OPS = ("check", "record", "refused", "observe")
_RESERVED = ("store", "invalid")  # the kinds of the guard's denials that no breaker makes
Failed = Callable[[str, Exception], None]


def custom_breakers(
    breakers: Iterable[Any], failed: Failed, configured: Iterable[Breaker] = ()
) -> tuple[Breaker, ...]:
    """``breakers`` checked, each one the guard does not know contained; ``failed(kind, exc)``
    hears of each exception one raises. ``configured``: the guard's own breakers."""
    kinds: set[str] = {b.kind for b in configured}
    out = []
    for i, breaker in enumerate(breakers):
        out.append(_contained(_checked(breaker, i), failed))
        if type(breaker) in REGISTRY.values():
            _unshared(breaker, i, kinds)
            checked_as_configured(breaker, i)
        else:
            _own_kind(breaker, i, kinds)
    return tuple(out)


def custom_messages(breakers: Iterable[Any]) -> dict[str, str]:
    """The denial text of each of your breakers that has one (a ``deny_message`` template with
    the placeholders of ``[guard] deny_message``), by kind; ``ConfigError`` names a bad one."""
    messages = {}
    for i, breaker in enumerate(breakers):
        if type(breaker) in REGISTRY.values() or isinstance(breaker, type):
            continue  # the library's own texts; a class is refused by custom_breakers
        text = getattr(breaker, "deny_message", None)
        if text is None:
            continue
        problem = template_problem(text) if isinstance(text, str) else "not a text"
        if problem is not None:
            raise ConfigError(
                f"breakers[{i}]: {type(breaker).__name__}.deny_message = {text!r} is not allowed: "
                f"expected {TEMPLATE_ALLOWED} ({problem})"
            )
        messages[breaker.kind] = text
    return messages


def _unshared(breaker: Breaker, index: int, kinds: set[str]) -> None:
    """A registry breaker whose kind the guard has (from its configuration or an earlier entry)
    would count every call twice in the state they share."""
    if breaker.kind in kinds:
        section = breaker.kind if breaker.kind in KIND_SECTIONS else REGISTRY[breaker.kind].section
        raise ConfigError(
            f"breakers[{index}]: {type(breaker).__name__} is not allowed: the guard already has a "
            f"breaker of kind {breaker.kind!r}, and both would count each call in the state they "
            f"share; set [{section}] instead, or turn it off ([{section}] enabled = false)"
        )
    kinds.add(breaker.kind)


def _own_kind(breaker: Any, index: int, kinds: set[str]) -> None:
    """Your breaker's kind names its denials in texts, logs and counts; "store" is the store's,
    and your ``deny_message`` would be the text of a configured breaker of the same kind."""
    name = type(breaker).__name__
    if breaker.kind in _RESERVED or not breaker.kind.isprintable():
        raise ConfigError(
            f"breakers[{index}]: {name}.kind = {breaker.kind!r} is not allowed: expected a printable "
            f"name, not {', '.join(_RESERVED)}"
        )
    if breaker.kind in kinds and getattr(breaker, "deny_message", None) is not None:
        raise ConfigError(
            f"breakers[{index}]: {name}.deny_message is not allowed with kind {breaker.kind!r}: "
            f"the guard's own {breaker.kind!r} breaker would deny with it; give {name} a kind of its own"
        )


def _checked(breaker: Any, index: int) -> Any:
    problem = _problem(breaker)
    if problem is None:
        return breaker
    name = breaker.__name__ if isinstance(breaker, type) else type(breaker).__name__
    raise ConfigError(
        f"breakers[{index}]: {name} is not allowed: expected a breaker (a `kind` "
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


def own_breaker(breaker: Breaker) -> Any:
    """The object you passed for ``breaker`` (the guard holds yours contained)."""
    return breaker._breaker if isinstance(breaker, _Contained) else breaker


def _contained(breaker: Any, failed: Failed) -> Breaker:
    known: Breaker = breaker
    return known if type(breaker) in REGISTRY.values() else _Contained(breaker, failed)


class _Contained:
    """One of your breakers, whose exceptions are its own: it then allows and records nothing."""

    __slots__ = ("_breaker", "_failed", "_failed_call", "awaits_results", "kind", "records")

    def __init__(self, breaker: Any, failed: Failed) -> None:
        self._breaker, self._failed = breaker, failed
        self._failed_call: CallKey | None = None  # the call whose check raised: not recorded
        self.kind: Kind | str = breaker.kind
        self.records = _flag(breaker, "records", True)
        self.awaits_results = _flag(breaker, "awaits_results", False)

    def check(self, state: AgentState, call: CallKey) -> Denial | None:
        """(The store checks, then records or refuses, one call at a time, under its lock.)"""
        self._failed_call = None
        try:
            denial = self._breaker.check(state, call)
        except Exception as exc:
            self._check_failed(call, exc)
            return None
        if denial is None:
            return None
        if isinstance(denial, Denial):
            return self._sound(denial)
        self._check_failed(call, TypeError(f"check returned a {type(denial).__name__}, not a Denial"))
        return None

    def _sound(self, denial: Denial) -> Denial:
        """``denial`` with fields the guard can word and count: a kind or rule that is not a
        string becomes the breaker's kind or "", a count or limit that is not an integer 0
        (a denial stays a denial, whatever it holds)."""
        kind = denial.kind if type(denial.kind) is str else self.kind
        count, limit = (n if type(n) is int else 0 for n in (denial.count, denial.limit))
        rule = denial.rule if type(denial.rule) is str else ""
        same = (kind, count, limit, rule)
        if all(
            a is b for a, b in zip(same, (denial.kind, denial.count, denial.limit, denial.rule), strict=True)
        ):
            return denial  # compared by identity: the fields' own __eq__ may raise
        return Denial(kind, count, limit, rule)

    def _check_failed(self, call: CallKey, exc: Exception) -> None:
        self._failed_call = call
        self._failed(self.kind, exc)

    def record(self, state: AgentState, call: CallKey) -> None:
        if call is not self._failed_call:
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
