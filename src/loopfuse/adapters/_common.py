"""Small helpers shared by the host adapters: imports, the abort error, scopes bound to host objects."""

from __future__ import annotations

import importlib
import itertools
import threading
import weakref
from collections.abc import Hashable
from types import ModuleType
from typing import TYPE_CHECKING, Any

from ..errors import LoopAbortedError
from ..wrapping import abort_error

if TYPE_CHECKING:
    pass

__all__ = ["Scope", "ScopeTable", "abort_error", "require", "stopped_text"]


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


class Scope:
    """A guard identity for one host object (a run); ``name`` is how logs call it."""

    __slots__ = ("__weakref__", "name")

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"Scope({self.name!r})"


class ScopeTable:
    """One ``Scope`` per (owner object, key), alive exactly as long as the owner is.

    The guard keys a ``Scope`` by identity and drops its state when the scope goes, so
    a run's state goes with the run. Thread-safe.
    """

    def __init__(self, prefix: str) -> None:
        self._prefix = prefix
        self._entries: dict[int, tuple[weakref.ref[Any], int, dict[Hashable, Scope]]] = {}
        self._lock = threading.Lock()
        self._runs = itertools.count(1)

    def get(self, owner: Any, key: Hashable) -> Scope | str:
        """The scope of ``key`` within ``owner``; a shared name if ``owner`` cannot be tracked."""
        try:
            with self._lock:
                _, run, scopes = self._entry_of(owner)
                scope = scopes.get(key)
                if scope is None:
                    scope = scopes[key] = Scope(f"{self._prefix} run {run}, {key}")
                return scope
        except TypeError:
            return f"{self._prefix} {key}"

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)

    def _entry_of(self, owner: Any) -> tuple[weakref.ref[Any], int, dict[Hashable, Scope]]:
        key = id(owner)
        entry = self._entries.get(key)
        if entry is not None and entry[0]() is owner:
            return entry
        entries = self._entries

        def drop(ref: weakref.ref[Any]) -> None:
            current = entries.get(key)
            if current is not None and current[0] is ref:
                del entries[key]

        entry = (weakref.ref(owner, drop), next(self._runs), {})
        entries[key] = entry
        return entry
