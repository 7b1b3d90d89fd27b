"""Listeners: receive the guard's events (checks, denials, escalations, fail-open).

Subclass :class:`GuardListener` and pass it to ``Guard(listeners=[...])``. OpenTelemetry
metrics and span events are one listener away: ``loopfuse.listeners.otel`` (needs the
``otel`` extra, so it is imported only when asked for).
"""

from __future__ import annotations

from ._base import GuardListener

__all__ = ["GuardListener"]
