"""OpenTelemetry for the guard: counters through the metrics API, span events per check.

    from loopfuse.listeners.otel import instrument
    instrument(guard)          # uses the global meter provider; spans of the current context

Metric attributes carry tool names, breaker kinds and fail-open reasons, never agent ids
(unbounded cardinality) and never argument values. A model makes tool names up, so a name is
cut to ``TOOL_SHOWN`` characters and, past ``MAX_TOOL_NAMES`` distinct names, recorded as
``OTHER_TOOL``.
"""

from __future__ import annotations

from typing import Any

try:
    from opentelemetry import metrics, trace
except ImportError as exc:  # pragma: no cover - exercised in a subprocess test
    raise ImportError("loopfuse.listeners.otel needs OpenTelemetry: pip install 'loopfuse[otel]'") from exc

from .. import __version__
from .._shown import shown_tool
from ..decision import Decision
from ..guard import Guard
from ..stores.memory import agent_label
from ._base import GuardListener

__all__ = ["OpenTelemetryListener", "instrument"]

SPAN_EVENT = "loopfuse.check"
FAIL_OPEN_EVENT = "loopfuse.fail_open"
# Distinct tool names one listener records as metric attributes: each is a series of every
# counter it appears in, and a model can make up any number. Past this, new names share OTHER_TOOL.
MAX_TOOL_NAMES = 1000
OTHER_TOOL = "(other)"


class OpenTelemetryListener(GuardListener):
    """Counts the guard's events as OpenTelemetry metrics and marks the current span.

    Counters: ``loopfuse.checks`` (``loopfuse.tool``, ``loopfuse.outcome`` allowed /
    denied / fail_open), ``loopfuse.denials`` (``loopfuse.kind``, ``loopfuse.tool``),
    ``loopfuse.escalations`` (same; once per agent per run of denials, not on every denied
    call after escalation) and ``loopfuse.fail_open`` (``loopfuse.reason``,
    ``loopfuse.tool``). ``loopfuse.tool`` is the name cut to ``TOOL_SHOWN`` characters, or
    ``OTHER_TOOL`` for a name first seen after ``MAX_TOOL_NAMES`` others. With
    ``span_events`` each check adds a ``loopfuse.check`` event to the span current in the
    caller's context, when that span is recording, and each fail-open event a
    ``loopfuse.fail_open`` event (their ``loopfuse.tool`` is cut, never ``OTHER_TOOL``).
    """

    def __init__(self, *, meter_provider: Any = None, span_events: bool = True) -> None:
        meter = metrics.get_meter("loopfuse", __version__, meter_provider=meter_provider)
        self.span_events = span_events
        self._checks = meter.create_counter("loopfuse.checks", "{check}", "Tool calls the guard judged")
        self._denials = meter.create_counter("loopfuse.denials", "{call}", "Tool calls the guard denied")
        self._escalations = meter.create_counter(
            "loopfuse.escalations", "{episode}", "Agents that reached abort_after_denials denials in a row"
        )
        self._fail_open = meter.create_counter(
            "loopfuse.fail_open",
            "{event}",
            "Calls allowed unjudged, results dropped or lost, incident-log write failures",
        )
        self._tools: set[str] = set()  # the names recorded as themselves

    def _tool(self, tool: str) -> str:
        """``tool`` as a metric attribute: cut, and ``OTHER_TOOL`` once the names are full.
        Unlocked: racing threads may add a few names past the bound, never an unbounded number."""
        shown = shown_tool(tool)
        if shown in self._tools:
            return shown
        if len(self._tools) >= MAX_TOOL_NAMES:
            return OTHER_TOOL
        self._tools.add(shown)
        return shown

    def on_check(self, decision: Decision, agent: Any) -> None:
        outcome = "allowed" if decision.allowed else "denied"
        self._checks.add(1, {"loopfuse.tool": self._tool(decision.tool), "loopfuse.outcome": outcome})
        if self.span_events:
            self._span_event(decision, agent)

    def on_deny(self, decision: Decision, agent: Any, first: bool) -> None:
        self._denials.add(1, self._kind_attributes(decision))

    def on_escalate(self, decision: Decision, agent: Any) -> None:
        self._escalations.add(1, self._kind_attributes(decision))

    def on_fail_open(self, reason: str, tool: str, agent: Any) -> None:
        self._fail_open.add(1, {"loopfuse.reason": reason, "loopfuse.tool": self._tool(tool)})
        span = trace.get_current_span()
        if self.span_events and span.is_recording():
            span.add_event(FAIL_OPEN_EVENT, {"loopfuse.reason": reason, "loopfuse.tool": shown_tool(tool)})

    def on_unjudged_check(self, reason: str, tool: str, agent: Any) -> None:
        self._checks.add(1, {"loopfuse.tool": self._tool(tool), "loopfuse.outcome": "fail_open"})

    def _kind_attributes(self, decision: Decision) -> dict[str, str]:
        return {"loopfuse.kind": decision.kind or "unknown", "loopfuse.tool": self._tool(decision.tool)}

    def _span_event(self, decision: Decision, agent: Any) -> None:
        span = trace.get_current_span()
        if span.is_recording():
            span.add_event(SPAN_EVENT, _event_attributes(decision, agent))


def _event_attributes(decision: Decision, agent: Any) -> dict[str, Any]:
    attributes: dict[str, Any] = {
        "loopfuse.tool": shown_tool(decision.tool),
        "loopfuse.allowed": decision.allowed,
    }
    label = agent_label(agent)
    if isinstance(label, str):
        attributes["loopfuse.agent"] = label
    if not decision.allowed:
        attributes.update(
            {
                "loopfuse.kind": decision.kind or "unknown",
                "loopfuse.count": decision.count,
                "loopfuse.limit": decision.limit,
                "loopfuse.escalate": decision.escalate,
            }
        )
    return attributes


def instrument(guard: Guard, **kwargs: Any) -> OpenTelemetryListener:
    """Add an ``OpenTelemetryListener`` to ``guard`` and return it (keyword args go to it)."""
    listener = OpenTelemetryListener(**kwargs)
    guard.listeners.append(listener)
    return listener
