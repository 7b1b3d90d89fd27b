"""Old import path, kept working: the same objects as ``loopfuse.listeners.otel``."""

from __future__ import annotations

from .listeners.otel import (
    FAIL_OPEN_EVENT,
    SPAN_EVENT,
    OpenTelemetryListener,
    instrument,
)

__all__ = ["FAIL_OPEN_EVENT", "SPAN_EVENT", "OpenTelemetryListener", "instrument"]
