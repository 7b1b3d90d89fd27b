"""The OpenTelemetry listener, read back through the SDK's in-memory reader and exporter."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader, NumberDataPoint
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import loopfuse.listeners.otel as otel_listener
from loopfuse import Guard
from loopfuse._calls import CallKey
from loopfuse._shown import TOOL_SHOWN
from loopfuse._state import AgentState, ToolResult
from loopfuse.decision import Denial, Kind
from loopfuse.otel import OpenTelemetryListener, instrument

CANARY = "CANARY-4f1e9b"


@pytest.fixture
def reader() -> InMemoryMetricReader:
    return InMemoryMetricReader()


@pytest.fixture
def guard(reader: InMemoryMetricReader) -> Guard:
    config = {"circuit_breaker": {"duplicate_limit": 2}, "guard": {"abort_after_denials": 2}}
    guard = Guard.from_config(config)
    instrument(guard, meter_provider=MeterProvider(metric_readers=[reader]))
    return guard


def points(reader: InMemoryMetricReader) -> dict[str, dict[tuple[tuple[str, Any], ...], int]]:
    """metric name -> sorted attribute items -> value."""
    out: dict[str, dict[tuple[tuple[str, Any], ...], int]] = {}
    data = reader.get_metrics_data()
    assert data is not None
    for rm in data.resource_metrics:
        for sm in rm.scope_metrics:
            for metric in sm.metrics:
                for p in metric.data.data_points:
                    assert isinstance(p, NumberDataPoint)
                    attributes = tuple(sorted((p.attributes or {}).items()))
                    out.setdefault(metric.name, {})[attributes] = int(p.value)
    return out


def test_counters_for_checks_denials_and_escalations(guard: Guard, reader: InMemoryMetricReader) -> None:
    for _ in range(4):  # allowed, allowed, denied, denied + escalated
        guard.check("web_search", {"q": CANARY}, "a")
    guard.check("bash", {"command": "ls"}, "a")
    got = points(reader)
    assert got["loopfuse.checks"] == {
        (("loopfuse.outcome", "allowed"), ("loopfuse.tool", "web_search")): 2,
        (("loopfuse.outcome", "denied"), ("loopfuse.tool", "web_search")): 2,
        (("loopfuse.outcome", "allowed"), ("loopfuse.tool", "bash")): 1,
    }
    assert got["loopfuse.denials"] == {(("loopfuse.kind", "duplicate"), ("loopfuse.tool", "web_search")): 2}
    assert got["loopfuse.escalations"] == {
        (("loopfuse.kind", "duplicate"), ("loopfuse.tool", "web_search")): 1
    }
    assert CANARY not in repr(got)


def test_escalation_is_counted_once_per_episode(guard: Guard, reader: InMemoryMetricReader) -> None:
    for _ in range(8):  # allowed, allowed, then six denials, escalated from the second on
        guard.check("web_search", {"q": CANARY}, "a")
    assert guard.check("web_search", {"q": CANARY}, "a").escalate  # still escalated
    key = (("loopfuse.kind", "duplicate"), ("loopfuse.tool", "web_search"))
    assert points(reader)["loopfuse.escalations"] == {key: 1}
    guard.check("bash", {"command": "ls"}, "a")  # allowed: the episode ends
    for _ in range(3):
        guard.check("web_search", {"q": CANARY}, "a")
    assert points(reader)["loopfuse.escalations"] == {key: 2}


def test_fail_open_events_are_counted_with_their_reason(guard: Guard, reader: InMemoryMetricReader) -> None:
    guard.check("bash", {"command": object()}, "a")
    got = points(reader)
    assert got["loopfuse.fail_open"] == {
        (("loopfuse.reason", "unserializable"), ("loopfuse.tool", "bash")): 1
    }
    assert got["loopfuse.checks"] == {(("loopfuse.outcome", "fail_open"), ("loopfuse.tool", "bash")): 1}


def test_unwritable_incident_log_counts_as_fail_open_not_as_a_check(
    tmp_path: Path, reader: InMemoryMetricReader
) -> None:
    log = tmp_path / "gone-dir" / "incidents.jsonl"
    log.parent.mkdir()
    guard = Guard.from_config({"circuit_breaker": {"duplicate_limit": 1, "incident_log": str(log)}})
    log.parent.rmdir()  # gone by the first denial
    instrument(guard, meter_provider=MeterProvider(metric_readers=[reader]))
    guard.check("bash", {}, "a")
    guard.check("bash", {}, "a")
    got = points(reader)
    assert got["loopfuse.fail_open"] == {(("loopfuse.reason", "incident_log"), ("loopfuse.tool", "bash")): 1}
    assert sum(got["loopfuse.checks"].values()) == 2 == guard.stats()["checks"]


class RaisesOnExplode:
    """A custom breaker that raises on the tool ``explode`` (the other breakers judge the call)."""

    kind: Kind = "cap"
    records = True

    def check(self, state: AgentState, call: CallKey) -> Denial | None:
        if call.tool == "explode":
            raise RuntimeError("breaker bug")
        return None

    def record(self, state: AgentState, call: CallKey) -> None:
        """Nothing to count."""

    def refused(self, state: AgentState, call: CallKey) -> None:
        """Nothing to count."""

    def observe(self, state: AgentState, call: CallKey, result: ToolResult) -> None:
        """Results do not matter."""


def mixed_run(guard: Guard) -> None:
    """Allowed and warned calls, duplicate, cap and invalid denials in two escalation episodes,
    fail-opens in checks and outside them, a raising custom breaker, a lost incident record."""
    nameless: Any = object()  # no tool name can be read from it
    for agent in ("a", "a2"):
        for _ in range(6):  # allowed, warned, denied, then escalated
            guard.check("search", {"q": "same"}, agent)
        guard.check("other", {"x": 1}, agent)  # allowed: the episode ends
        for _ in range(3):
            guard.check("search", {"q": "same"}, agent)
    for i in range(45):
        guard.check("fetch", {"i": i}, "c")  # cap denials from the 41st
    for _ in range(6):
        guard.note_invalid("d")
    guard.note_invalid({"id": "x"})  # cannot be keyed: a fail-open outside a check
    guard.check("search", {"q": 1j}, "b")  # unserializable, in a check
    guard.check(nameless, {}, "b")  # tool_name, in a check
    guard.check("f", {}, {"id": "x"})  # agent_identity, in a check
    guard.check("explode", {}, "b")  # the custom breaker raises: allowed, judged by the others
    guard.record_result("search", {"q": 1j}, "r", "b")  # unserializable, a result
    guard.record_result("search", {"q": "zz"}, object(), "b")  # a result it cannot digest
    guard.record_result(nameless, {}, "r", "b")  # tool_name, a result


@pytest.mark.parametrize("mode", ["enforce", "shadow"])
def test_checks_total_equals_stats_checks_in_a_mixed_run(
    mode: str, tmp_path: Path, reader: InMemoryMetricReader
) -> None:
    log = tmp_path / "gone" / "incidents.jsonl"
    log.parent.mkdir()
    config = {
        "guard": {"mode": mode, "abort_after_denials": 2, "incident_log": str(log)},
        "duplicate": {"limit": 3, "warn_at": 2},
        "cap": {"limit": 40},
    }
    guard = Guard.from_config(config, breakers=[RaisesOnExplode()])
    log.parent.rmdir()  # the first denials' records are lost
    instrument(guard, meter_provider=MeterProvider(metric_readers=[reader]), span_events=False)
    mixed_run(guard)
    stats, got = guard.stats(), points(reader)
    outcomes: dict[str, int] = {}
    for key, value in got["loopfuse.checks"].items():
        outcome = dict(key)["loopfuse.outcome"]
        outcomes[outcome] = outcomes.get(outcome, 0) + value
    assert sum(outcomes.values()) == stats["checks"]
    assert outcomes["fail_open"] == 3  # unserializable, tool_name and agent_identity in checks
    assert stats["warnings"] and stats["escalations"] and stats["fail_open"]["breaker"] == 1
    assert set(stats["denials"]) == {"duplicate", "cap", "invalid"}
    assert sum(got["loopfuse.denials"].values()) == stats["denied"]
    assert sum(got["loopfuse.fail_open"].values()) == sum(stats["fail_open"].values()) - 1  # not breaker
    judged = stats["allowed"] + stats["denied"]  # shadow mode: would-be denials are allowed
    assert outcomes["allowed"] + outcomes.get("denied", 0) == judged
    assert outcomes.get("denied", 0) == (stats["denied"] if mode == "enforce" else 0)


def tool_totals(reader: InMemoryMetricReader, metric: str) -> dict[str, int]:
    """``loopfuse.tool`` -> the metric's total over its other attributes."""
    totals: dict[str, int] = {}
    for key, value in points(reader)[metric].items():
        tool = dict(key)["loopfuse.tool"]
        totals[tool] = totals.get(tool, 0) + value
    return totals


def test_made_up_tool_names_past_the_bound_share_one_series(reader: InMemoryMetricReader) -> None:
    bound = otel_listener.MAX_TOOL_NAMES
    guard = Guard()
    instrument(guard, meter_provider=MeterProvider(metric_readers=[reader]), span_events=False)
    for i in range(bound + 50):
        guard.check(f"made_up_{i}", {}, f"agent-{i}")
    guard.check("made_up_0", {}, "again")  # a name recorded before the bound keeps its series
    guard.check("late", {"q": 1j}, "b")  # a fail-open's name past the bound too
    checks = tool_totals(reader, "loopfuse.checks")
    assert len(checks) == bound + 1
    assert checks[otel_listener.OTHER_TOOL] == 51 and checks["made_up_0"] == 2
    assert sum(checks.values()) == guard.stats()["checks"]
    assert tool_totals(reader, "loopfuse.fail_open") == {otel_listener.OTHER_TOOL: 1}


def test_a_long_made_up_tool_name_is_cut_in_metrics_and_span_events(reader: InMemoryMetricReader) -> None:
    long = "L" * 200_000
    shown = long[: TOOL_SHOWN - 3] + "..."
    guard = Guard.from_config({"duplicate": {"limit": 1}})
    instrument(guard, meter_provider=MeterProvider(metric_readers=[reader]))
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    with provider.get_tracer("test").start_as_current_span("turn"):
        for args in ({}, {}, {"q": 1j}):  # allowed, denied, fail-open
            guard.check(long, args, "a")
    for metric in ("loopfuse.checks", "loopfuse.denials", "loopfuse.fail_open"):
        assert set(tool_totals(reader, metric)) == {shown}, metric
    (span,) = exporter.get_finished_spans()
    assert [(e.attributes or {})["loopfuse.tool"] for e in span.events] == [shown] * 3


def test_span_event_per_check_on_the_current_span(guard: Guard) -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("test")
    with tracer.start_as_current_span("agent-turn"):
        for _ in range(3):
            guard.check("web_search", {"q": CANARY}, "agent-7")
    guard.check("web_search", {"q": "outside any span"}, "agent-7")
    (span,) = exporter.get_finished_spans()
    events = [dict(e.attributes or {}) for e in span.events if e.name == "loopfuse.check"]
    assert [e["loopfuse.allowed"] for e in events] == [True, True, False]
    assert events[2]["loopfuse.kind"] == "duplicate"
    assert (events[2]["loopfuse.count"], events[2]["loopfuse.limit"]) == (2, 2)
    assert events[0]["loopfuse.agent"] == "agent-7"
    assert CANARY not in repr([e.attributes for e in span.events])


def test_span_events_can_be_turned_off(reader: InMemoryMetricReader) -> None:
    guard = Guard(listeners=[OpenTelemetryListener(span_events=False)])
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    with provider.get_tracer("test").start_as_current_span("turn"):
        guard.check("bash", {}, "a")
    assert exporter.get_finished_spans()[0].events == ()


def run_python(code: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2] / "src"))
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30, env=env)


def test_missing_opentelemetry_raises_import_error_naming_the_extra() -> None:
    code = (
        "import sys; sys.modules['opentelemetry'] = None\n"
        "import loopfuse\n"
        "try:\n    import loopfuse.otel\nexcept ImportError as e:\n    print(e)\n"
    )
    out = run_python(code)
    assert "pip install 'loopfuse[otel]'" in out.stdout, out.stderr


def test_import_loopfuse_does_not_import_opentelemetry() -> None:
    out = run_python("import sys, loopfuse; print(sorted(m for m in sys.modules if 'opentelemetry' in m))")
    assert out.stdout.strip() == "[]", out.stderr
