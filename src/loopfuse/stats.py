"""Thread-safe counters behind ``Guard.stats()``."""

from __future__ import annotations

import threading
from collections import Counter
from typing import Any

__all__ = ["GuardStats"]


class GuardStats:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts: Counter[str] = Counter()
        self._denials: Counter[str] = Counter()
        self._fail_open: Counter[str] = Counter()

    def allowed(self) -> None:
        with self._lock:
            self._counts["checks"] += 1
            self._counts["allowed"] += 1

    def skipped(self) -> None:
        with self._lock:
            self._counts["skipped"] += 1

    def denial(self, kind: str, escalated: bool) -> None:
        with self._lock:
            self._counts["checks"] += 1
            self._denials[kind] += 1
            if escalated:
                self._counts["escalations"] += 1

    def fail_open(self, reason: str, checked: bool = True) -> None:
        """An event the guard could not judge; ``checked`` when it was a call's check."""
        with self._lock:
            self._fail_open[reason] += 1
            if checked:
                self._counts["checks"] += 1

    def snapshot(self) -> dict[str, Any]:
        with self._lock:
            out: dict[str, Any] = {
                name: self._counts[name] for name in ("checks", "allowed", "skipped", "escalations")
            }
            out["denied"] = sum(self._denials.values())
            out["denials"] = dict(self._denials)
            out["fail_open"] = dict(self._fail_open)
        return out
