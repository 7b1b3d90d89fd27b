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

from loopfuse import Guard
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
