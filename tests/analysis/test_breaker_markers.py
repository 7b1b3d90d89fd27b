"""The HTML report's markers: each configured breaker replayed alone, and named when past the chart."""

from __future__ import annotations

import json
from pathlib import Path
from typing import get_args

from loopfuse import Guard, parse_config
from loopfuse.analysis.replay import shadow_config
from loopfuse.analysis.scanreport import timeline_svg
from loopfuse.analysis.scanstats import TIMELINE_POINTS, scan_calls
from loopfuse.breakers.build import build_breakers
from loopfuse.cli.scan import breaker_configs
from loopfuse.cli.scan_charts import breaker_markers, breaker_sections
from loopfuse.config import GuardConfig
from loopfuse.decision import Kind
from loopfuse.transcripts.base import ReadTally
from loopfuse.transcripts.detect import sources
from loopfuse.transcripts.model import ToolCall

CALL_BREAKERS = set(get_args(Kind)) - {"cap", "store", "invalid"}  # cap: its own marker; store: no breaker


def on(config: GuardConfig) -> list[str]:
    return [name for name, section in breaker_sections(config).items() if section.enabled]


def test_each_marker_is_its_breaker_alone_for_every_kind(tmp_path: Path) -> None:
    """Every kind a breaker can deny with gets a marker, and its configuration runs that
    breaker and no other (the invalid-turn breaker included), with the user's limits."""
    config = parse_config(
        {
            "circuit_breaker": {"duplicate_limit": 3, "incident_log": str(tmp_path / "incidents.jsonl")},
            "loop_brake": {"max_repeats": 2},
            "invalid": {"limit": 4},
            "tools": {"read": {"duplicate_limit": 9}},
        }
    )
    alone = breaker_configs(config)
    assert set(alone) == CALL_BREAKERS | {"invalid"}
    for name, one in alone.items():
        assert len(on(one)) == 1, (name, on(one))
        assert [b.kind for b in build_breakers(one)] == ([] if name == "invalid" else [name])
        assert one.circuit_breaker.incident_log is None and one.store.url == "memory://"
    assert alone["duplicate"].circuit_breaker.duplicate_limit == 3
    assert alone["duplicate"].tools["read"].duplicate_limit == 9
    assert alone["invalid"].invalid.limit == 4 and on(alone["invalid"]) == ["invalid"]


def test_disabled_breakers_get_no_marker() -> None:
    config = parse_config(
        {"cycle": {"enabled": False}, "same_error": {"enabled": False}, "invalid": {"enabled": False}}
    )
    assert sorted(breaker_configs(config)) == ["duplicate", "failures", "near_duplicate", "stall"]


def test_markers_on_a_run_are_each_breaker_alone(tmp_path: Path) -> None:
    """Six malformed replies in a row, then the same search again and again: the
    invalid-turn marker falls on the sixth reply, the window's on the 6th search, and no
    breaker's marker moves because another breaker is on."""
    rows = [{"tool": "_format_error", "args": {}}] * 6 + [{"tool": "search", "args": {"q": "x"}}] * 9
    session = tmp_path / "session.jsonl"
    session.write_text("".join(json.dumps({"step": i, **r}) + "\n" for i, r in enumerate(rows)))
    (source,) = sources([session], ReadTally())
    config = parse_config({"loop_brake": {"max_repeats": 3}})
    marks = breaker_markers({"session.jsonl": source}, config)[("session.jsonl", "session", "agent")]
    assert marks == {
        "invalid": 5,
        "duplicate": 6 + 6,
        "repeat": 6 + 3,
        "cycle": None,
        "near_duplicate": None,
        "same_error": None,
        "stall": None,
        "failures": None,
    }


def test_a_marker_past_the_charted_calls_is_named_not_drawn_off_the_chart() -> None:
    """Charts hold a run's first 2,000 calls: a loop starting later is still named."""
    calls = [ToolCall("r", "a", i, "read", {"i": i}, None, f"line {i}") for i in range(2200)]
    calls += [ToolCall("r", "a", 2200 + i, "search", {"q": "same"}, None, "x") for i in range(10)]
    no_cap = Guard(shadow_config(parse_config({"circuit_breaker": {"max_calls_per_agent": 0}})))
    (row,) = scan_calls(calls, timeline=True, guard=no_cap)
    assert (row.loop_start, len(row.timeline)) == (2200, TIMELINE_POINTS)
    assert (row.verdict, row.breaker, row.denied_at) == ("loop", "duplicate", 2205)
    svg = timeline_svg(row, {"duplicate": 2205, "repeat": 1500})
    assert "guard denies: duplicate (step 2205, past the chart)" in svg
    assert "duplicate denies (step 2205, past the chart)" in svg
    assert "repeat denies (step 1500)</text>" in svg and svg.count("<line") == 1
