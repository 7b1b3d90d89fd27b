"""Thread-safe counters behind ``Guard.stats()``."""

from __future__ import annotations

import itertools
import sys
from collections import Counter
from collections.abc import Callable
from typing import Any

from ._fork import fork_safe_lock

__all__ = ["GuardStats"]

# Whether a C call like ``next()`` on a counter is atomic: with the interpreter lock, yes; on a
# free-threaded build running without it (3.13+), the count is taken under the stats lock.
_ATOMIC_NEXT: bool = getattr(sys, "_is_gil_enabled", lambda: True)()


class GuardStats:
    """Counts of what the guard decided. The allowed checks, one on nearly every call, are
    counted without the lock: ``count_allowed`` is the ``__next__`` of a C counter, atomic
    under the interpreter lock and about a quarter of the cost of a method taking the lock
    (without the interpreter lock, the same counter is advanced under the stats lock)."""

    def __init__(self) -> None:
        self._lock = fork_safe_lock()
        self._checks = 0  # the checks not counted by count_allowed
        self._ticks = itertools.count()
        self._read = 0  # ticks taken by snapshot() to read the counter
        self.count_allowed: Callable[[], object] = self._ticks.__next__ if _ATOMIC_NEXT else self._locked_tick
        self._skipped = 0
        self._escalations = 0
        self._denials: Counter[str] = Counter()
        self._fail_open: Counter[str] = Counter()
        self._warnings: Counter[str] = Counter()

    def allowed(self) -> None:
        self.count_allowed()

    def _locked_tick(self) -> None:
        with self._lock:
            next(self._ticks)

    def skipped(self) -> None:
        with self._lock:
            self._skipped += 1

    def denial(self, kind: str, escalated: bool) -> None:
        with self._lock:
            self._checks += 1
            self._denials[kind] += 1
            self._escalations += escalated

    def warning(self, kind: str) -> None:
        """An allowed call that a breaker's ``warn_at`` reached (the check is counted as allowed)."""
        with self._lock:
            self._warnings[kind] += 1

    def fail_open(self, reason: str, checked: bool = True) -> None:
        """An event the guard could not judge; ``checked`` when it was a call's check."""
        with self._lock:
            self._fail_open[reason] += 1
            self._checks += checked

    def snapshot(self) -> dict[str, Any]:
        with self._lock:
            allowed = next(self._ticks) - self._read
            self._read += 1
            return {
                "checks": self._checks + allowed,
                "allowed": allowed,
                "skipped": self._skipped,
                "escalations": self._escalations,
                "denied": sum(self._denials.values()),
                "denials": dict(self._denials),
                "fail_open": dict(self._fail_open),
                "warnings": dict(self._warnings),
            }
