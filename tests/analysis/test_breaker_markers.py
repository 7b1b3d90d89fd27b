"""The HTML report's markers: each configured breaker replayed alone, and named when past the chart."""

from __future__ import annotations

from pathlib import Path

from loopfuse import parse_config
from loopfuse.breakers.build import build_breakers
from loopfuse.cli.scan import breaker_configs
from loopfuse.scanreport import timeline_svg
from loopfuse.scanstats import TIMELINE_POINTS, scan_calls
from loopfuse.transcripts.model import ToolCall


def kinds(config: object) -> list[str]:
    return [b.kind for b in build_breakers(config)]  # type: ignore[arg-type]


def test_each_breaker_alone_and_every_breaker_has_a_marker(tmp_path: Path) -> None:
    config = parse_config(
        {
            "circuit_breaker": {"duplicate_limit": 3, "incident_log": str(tmp_path / "incidents.jsonl")},
            "loop_brake": {"max_repeats": 2},
            "tools": {"read": {"duplicate_limit": 9}},
        }
    )
    alone = breaker_configs(config)
    assert sorted(alone) == ["cycle", "duplicate", "near_duplicate", "repeat", "same_error"]
    for name, one in alone.items():
        assert kinds(one) == [name], name
        assert one.circuit_breaker.incident_log is None and one.store.url == "memory://"
    assert alone["duplicate"].circuit_breaker.duplicate_limit == 3
    assert alone["duplicate"].tools["read"].duplicate_limit == 9


def test_disabled_breakers_get_no_marker() -> None:
    config = parse_config({"cycle": {"enabled": False}, "same_error": {"enabled": False}})
    assert sorted(breaker_configs(config)) == ["duplicate", "near_duplicate"]


def test_a_marker_past_the_charted_calls_is_named_not_drawn_off_the_chart() -> None:
    """Charts hold a run's first 2,000 calls: a loop starting later is still named."""
    calls = [ToolCall("r", "a", i, "read", {"i": i}, None, "x") for i in range(2200)]
    calls += [ToolCall("r", "a", 2200 + i, "search", {"q": "same"}, None, "x") for i in range(10)]
    (row,) = scan_calls(calls, timeline=True)
    assert (row.loop_start, len(row.timeline)) == (2200, TIMELINE_POINTS)
    svg = timeline_svg(row, {"duplicate": 2205, "repeat": 1500})
    assert "loop starts (step 2200, past the chart)" in svg
    assert "duplicate denies (step 2205, past the chart)" in svg
    assert "repeat denies (step 1500)</text>" in svg and svg.count("<line") == 1
