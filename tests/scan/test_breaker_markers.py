"""The HTML report's markers: each configured breaker replayed alone."""

from __future__ import annotations

from pathlib import Path

from loopfuse import parse_config
from loopfuse.breakers.build import build_breakers
from loopfuse.cli.scan import breaker_configs


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
