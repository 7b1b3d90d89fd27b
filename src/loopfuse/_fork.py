"""Locks a forked child can take: a child gets a copy of every lock its parent held at the
fork, held by a thread the child does not have, so its first check would wait for ever. The
child releases each lock made here (``fork_safe_lock``) as it starts."""

from __future__ import annotations

import os
import threading
import weakref

__all__ = ["fork_safe_lock"]

_LOCKS: weakref.WeakSet[threading.Lock] = weakref.WeakSet()


def fork_safe_lock() -> threading.Lock:
    """A ``threading.Lock`` that is free again in a child made by ``fork``."""
    lock = threading.Lock()
    _LOCKS.add(lock)
    return lock


def _free_in_child() -> None:
    for lock in list(_LOCKS):
        lock._at_fork_reinit()  # type: ignore[attr-defined]  # CPython's own, for such locks


if hasattr(os, "register_at_fork"):  # not on Windows, which does not fork
    os.register_at_fork(after_in_child=_free_in_child)
