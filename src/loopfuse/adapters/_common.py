"""Small helpers shared by the host adapters: imports, the abort error, scopes bound to host objects."""

from __future__ import annotations

import importlib
import inspect
import itertools
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator
from types import ModuleType
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from .._escalation import escalation_point
from .._process import process_number
from .._weak_table import WeakIdentityTable
from .._wrapping import abort_error
from ..errors import LoopAbortedError
from ..incidents import logger

if TYPE_CHECKING:
    from ..decision import Decision
    from ..guard import Guard

__all__ = [
    "WARNING_KEY",
    "HostLimit",
    "InvalidTurns",
    "PendingCalls",
    "PendingWarnings",
    "Scope",
    "ScopeTable",
    "abort_error",
    "jsonable",
    "require",
    "stop_error",
    "stopped_text",
    "with_warning",
]

WARNING_KEY = "loopfuse_warning"
"""The key a dict result gets its warning under."""


def with_warning(result: Any, warning: str | None) -> Any:
    """``result`` with ``warning`` (``Decision.warning``) added where the model reads it, in
    the result's own form: a str gets ``"\n\n" + warning``; a dict a copy with the
    ``"loopfuse_warning"`` key; a list of content blocks one more text block (a list of
    anything else, the warning as one more item); None becomes the warning; anything else
    its ``str`` followed by the warning, but an awaitable or an iterator, whose work is not done
    yet, is returned as it is. ``result`` itself is never changed, and is returned as it is,
    without the warning, when it cannot be read (its ``__str__`` raises, say)."""
    if warning is None:
        return result
    try:
        return _warned(result, warning)
    except Exception:  # the tool's own object
        return result


def _warned(result: Any, warning: str) -> Any:
    if isinstance(result, str):
        return f"{result}\n\n{warning}" if result else warning
    if isinstance(result, dict):
        return {**result, WARNING_KEY: warning}
    if isinstance(result, list):
        return [*result, _text_block_like(result, warning)]
    if inspect.isawaitable(result) or isinstance(result, Iterator):
        return result  # a sync function's coroutine or generator: its text would lose its work
    return warning if result is None else f"{result}\n\n{warning}"


def jsonable(result: Any) -> Any:
    """``result`` as JSON data for the guard, when a framework hands a tool's return over as
    it is: a pydantic model or a dataclass as its fields (``pydantic_core``, which the
    frameworks that do so depend on); anything else, or what cannot be converted, as it is."""
    if result is None or isinstance(result, str | int | float | bool | BaseException):
        return result
    try:
        from pydantic_core import to_jsonable_python
    except ImportError:  # pragma: no cover - every framework that needs it brings pydantic
        return result
    try:
        return to_jsonable_python(result)
    except Exception:  # the tool's own object, which may raise anything
        return result


T = TypeVar("T")


class PendingCalls(Generic[T]):
    """What an adapter keeps of allowed calls waiting for their result, by call id (for hosts
    that check a call in one hook and see its result in another). Bounded: past ``size`` calls
    whose result never came (a tool that raised, a run cancelled mid-call), the oldest go."""

    def __init__(self, size: int = 1024) -> None:
        self._waiting: OrderedDict[Hashable, T] = OrderedDict()
        self._size = size
        self._lock = threading.Lock()

    def put(self, call: Hashable, value: T) -> None:
        with self._lock:
            self._waiting[call] = value
            if len(self._waiting) > self._size:
                self._waiting.popitem(last=False)

    def pop(self, call: Hashable) -> T | None:
        if not self._waiting:
            return None
        with self._lock:
            return self._waiting.pop(call, None)

    def get(self, call: Hashable) -> T | None:
        """The value kept for ``call``, left in place."""
        return self._waiting.get(call) if self._waiting else None

    def __len__(self) -> int:
        return len(self._waiting)


class InvalidTurns:
    """The invalid turn of each model turn of a scope: noted once, at its first call with no
    usable call (a missing tool's, rejected arguments), and shared by its others. A turn the
    host cannot name (None) is noted for each call. Bounded, as ``PendingCalls``."""

    def __init__(self) -> None:
        self._decisions: PendingCalls[Decision] = PendingCalls()
        self._lock = threading.Lock()

    def note(self, guard: Guard, scope: Any, turn: Any, reason: str) -> Decision:
        with self._lock:  # the calls of one turn may be decided in parallel threads
            decision = self._decisions.get((scope, turn)) if turn is not None else None
            if decision is None:
                decision = guard.note_invalid(scope, reason=reason)
                self._keep(scope, turn, decision)
        return decision

    async def anote(self, guard: Guard, scope: Any, turn: Any, reason: str) -> Decision:
        decision = self._decisions.get((scope, turn)) if turn is not None else None
        if decision is None:
            decision = await guard.anote_invalid(scope, reason=reason)
            self._keep(scope, turn, decision)
        return decision

    def _keep(self, scope: Any, turn: Any, decision: Decision) -> None:
        if turn is not None:
            self._decisions.put((scope, turn), decision)


class PendingWarnings(PendingCalls[str]):
    """The warnings of allowed calls waiting for their result; calls without one are not kept."""

    def put(self, call: Hashable, value: str | None) -> None:
        if value is not None:
            super().put(call, value)


def _text_block_like(blocks: list[Any], text: str) -> Any:
    """A text content block in the form of ``blocks``' (a dict, or a copy of one of its
    text block objects), else ``text`` itself."""
    for block in blocks:
        if isinstance(block, dict) and "type" in block:
            return {"type": "text", "text": text}
        if getattr(block, "type", None) == "text" and hasattr(block, "model_copy"):
            return block.model_copy(update={"text": text})
    return text


def require(module: str, extra: str) -> ModuleType:
    """Import ``module``, or raise ImportError telling how to install loopfuse's ``extra``."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(
            f"loopfuse.adapters.{extra.replace('-', '_')} needs {module}: pip install 'loopfuse[{extra}]'"
        ) from exc


def stopped_text(error: LoopAbortedError) -> str:
    """The final message of a run an adapter ended instead of raising."""
    return f"Run stopped by loopfuse. {error}"


class HostLimit:
    """Warns once (per adapter object) when a host's own turn or step limit ends a looping
    run before the guard's escalation point (``loopfuse._escalation.escalation_point``)."""

    def __init__(self, guard: Guard, host: str) -> None:
        self.host = host
        self.point = escalation_point(guard.config)
        self.denials = guard.config.guard.abort_after_denials or 0
        self.warned = False

    def check(self, setting: str, limit: Any, needed: Callable[[int], int] = lambda point: point) -> None:
        """Warn if ``limit`` (the host's ``setting``; None or 0: no limit) is below what a run
        needs to reach the escalation point (``needed(point)``, by default the point itself)."""
        point = self.point
        if self.warned or point is None or not _is_limit(limit):
            return
        required = needed(point)
        if limit < required:
            self.warned = True
            logger.warning(
                "loopfuse: %s %s=%d ends a looping run before loopfuse can: loopfuse stops a loop "
                "of one repeated call at tool call %d (%d allowed, then %d denials), which needs "
                "%s >= %d. Raise %s, or lower [guard] abort_after_denials or the breakers' limits.",
                self.host, setting, limit, point, point - self.denials, self.denials, setting, required, setting,
            )  # fmt: skip


def _is_limit(value: Any) -> bool:
    """A positive integer (LangGraph's default recursion limit is an ``int`` subclass)."""
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def stop_error(guard: Guard, decision: Decision, agent: Any) -> LoopAbortedError:
    """The error an adapter stops a run with: ``abort_error``, counting for invalid turns the
    denials the streak got (from the ``[invalid] limit``-th turn on)."""
    if decision.kind != "invalid":
        return abort_error(guard, decision, agent)
    denials = decision.count - decision.limit + 1
    return LoopAbortedError(agent=str(agent), tool=decision.tool, denials=denials, kind="invalid")


class Scope:
    """A guard identity for one host object (a run); ``name`` is how logs call it."""

    __slots__ = ("__weakref__", "name")

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"Scope({self.name!r})"


_RUNS = itertools.count(1)  # the runs of every table: two guards on one store name theirs apart


class ScopeTable:
    """One ``Scope`` per (owner object, key), alive exactly as long as the owner is.

    The guard keys a ``Scope`` by identity and drops its state when the scope goes, so
    a run's state goes with the run. Thread-safe.
    """

    def __init__(self, prefix: str) -> None:
        self._prefix = prefix
        self._entries: WeakIdentityTable[tuple[int, dict[Hashable, Scope]]] = WeakIdentityTable()
        self._lock = threading.Lock()

    def get(self, owner: Any, key: Hashable) -> Scope | str:
        """The scope of ``key`` within ``owner``; a shared name if ``owner`` cannot be tracked."""
        try:
            with self._lock:
                run, scopes = self._entries.value(owner, lambda: (next(_RUNS), {}))
                scope = scopes.get(key)
                if scope is None:
                    scope = scopes[key] = Scope(f"{self._prefix} run {process_number():016x}-{run}, {key}")
                return scope
        except TypeError:
            return f"{self._prefix} {key}"

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)
