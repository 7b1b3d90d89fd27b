"""One vocabulary: [duplicate], [cap], [repeat] and [guard]'s guard-wide keys, the seed
spellings kept as aliases with the same decisions."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loopfuse import ConfigError, Guard, parse_config
from loopfuse.config import load_config_file

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SEED = Path(__file__).resolve().parent / "seed_configs"  # the shipped files as they were written before

PAIRS = [
    ({"circuit_breaker": {"duplicate_limit": 4, "window": 50}}, {"duplicate": {"limit": 4, "window": 50}}),
    ({"circuit-breaker": {"maxCallsPerAgent": 20}}, {"cap": {"limit": 20}}),
    ({"loop_brake": {"max_repeats": 2}}, {"repeat": {"limit": 2}}),
    ({"loop_brake": {"max_repeats": 2, "warn_at": 1}}, {"repeat": {"max_repeats": 2, "warnAt": 1}}),
    (
        {"circuit_breaker": {"exempt": ["todo"], "only": [], "deny_message": "no {tool}"}},
        {"guard": {"exempt": ["todo"], "only": [], "deny_message": "no {tool}"}},
    ),
    (
        {"circuit_breaker": {"same_result_limit": 3, "result_aware": False}, "guard": {"mode": "shadow"}},
        {"duplicate": {"same_result_limit": 3, "result_aware": False}, "guard": {"mode": "shadow"}},
    ),
]


@pytest.mark.parametrize(("seed", "kind"), PAIRS)
def test_both_spellings_give_the_same_configuration(seed: dict[str, Any], kind: dict[str, Any]) -> None:
    assert parse_config(seed) == parse_config(kind)


def test_each_part_of_the_circuit_breaker_section_switches_off_alone() -> None:
    window_off = Guard.from_config({"duplicate": {"enabled": False}, "cap": {"limit": 3}})
    assert [window_off.check("ls", {}).kind for _ in range(4)] == [None, None, None, "cap"]
    cap_off = Guard.from_config({"cap": {"enabled": False}, "duplicate": {"limit": 2}})
    assert [cap_off.check("ls", {}).kind for _ in range(3)] == [None, None, "duplicate"]


def test_an_error_names_the_key_as_the_file_wrote_it() -> None:
    with pytest.raises(ConfigError, match=r"\[duplicate\] limit = 0 is not allowed"):
        parse_config({"duplicate": {"limit": 0}})
    with pytest.raises(ConfigError, match=r"\[cap\]: unknown key 'limt' \(did you mean 'limit'\?\)"):
        parse_config({"cap": {"limt": 3}})
    with pytest.raises(ConfigError, match="keep one"):
        parse_config({"duplicate": {"limit": 3}, "circuit_breaker": {"duplicate_limit": 3}})
    with pytest.raises(ConfigError, match="keep one"):
        parse_config({"guard": {"exempt": ["a"]}, "circuit_breaker": {"exempt": ["b"]}})


def _in_kind_spelling(mapping: dict[str, Any]) -> dict[str, Any]:
    """``mapping`` rewritten in the kinds' vocabulary (what a file written today looks like)."""
    out = {k: dict(v) for k, v in mapping.items() if k not in ("circuit_breaker", "loop_brake")}
    cb = dict(mapping.get("circuit_breaker", {}))
    moved = {"duplicate_limit": ("duplicate", "limit"), "max_calls_per_agent": ("cap", "limit")}
    for key, value in cb.items():
        wide = key in ("exempt", "only", "ignore_args", "deny_message", "incident_log")
        section, name = moved.get(key, ("guard" if wide else "duplicate", key))
        out.setdefault(section, {})[name] = value
    if "loop_brake" in mapping:
        out["repeat"] = dict(mapping["loop_brake"])
    return out


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.toml")), ids=lambda p: p.name)
def test_every_shipped_file_means_the_same_in_the_kinds_spelling(path: Path) -> None:
    mapping = load_config_file(path)
    assert parse_config(_in_kind_spelling(mapping)) == parse_config(mapping)


CALLS = st.lists(
    st.tuples(st.sampled_from(["ls", "cat", "grep"]), st.integers(0, 2), st.booleans()), max_size=40
)


@settings(max_examples=60, deadline=None)
@given(CALLS, st.sampled_from(PAIRS))
def test_same_decisions_on_any_stream(calls: list[tuple[str, int, bool]], pair: tuple[Any, Any]) -> None:
    guards = [Guard.from_config(pair[0]), Guard.from_config(pair[1])]
    for tool, arg, ok in calls:
        answers = [g.check(tool, {"n": arg}) for g in guards]
        assert answers[0] == answers[1]
        for g in guards:
            g.record_result(tool, {"n": arg}, f"out {arg}", ok=ok)


@pytest.mark.parametrize("name", ["loopfuse.toml", "brake3.toml"])
def test_the_files_shipped_in_the_seed_spelling_mean_what_the_examples_say_now(name: str) -> None:
    assert parse_config(load_config_file(SEED / name)) == parse_config(load_config_file(EXAMPLES / name))
