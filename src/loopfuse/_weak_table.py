"""Values kept per object by identity, each dropped when its object is garbage collected."""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any, Generic, TypeVar

V = TypeVar("V")

__all__ = ["WeakIdentityTable"]


class WeakIdentityTable(Generic[V]):
    """A value per live object, keyed by identity (the object need not be hashable).

    The object's death drops its value, so a host's run object takes its state with it.
    ``value`` raises ``TypeError`` for an object that cannot be weakly referenced. Not
    thread-safe: callers hold their own lock."""

    __slots__ = ("_entries",)

    def __init__(self) -> None:
        self._entries: dict[int, tuple[weakref.ref[Any], V]] = {}

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, owner: Any) -> V | None:
        entry = self._entries.get(id(owner))
        return entry[1] if entry is not None and entry[0]() is owner else None

    def value(self, owner: Any, make: Callable[[], V]) -> V:
        """``owner``'s value, made on first use."""
        found = self.get(owner)
        if found is None:
            found = make()
            self._entries[id(owner)] = (self._ref(owner), found)
        return found

    def pop(self, owner: Any) -> bool:
        """Drop ``owner``'s value; whether it had one."""
        if self.get(owner) is None:
            return False
        del self._entries[id(owner)]
        return True

    def _ref(self, owner: Any) -> weakref.ref[Any]:
        key, entries = id(owner), self._entries

        def drop(ref: weakref.ref[Any]) -> None:
            current = entries.get(key)
            if current is not None and current[0] is ref:
                del entries[key]

        return weakref.ref(owner, drop)
