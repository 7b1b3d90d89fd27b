"""Every new key is validated with a ConfigError naming section, key, value and what is allowed."""

from __future__ import annotations

from typing import Any

import pytest

from loopfuse import ConfigError, Guard


@pytest.mark.parametrize(
    ("config", "names"),
    [
        ({"guard": {"mode": "loud"}}, ["[guard]", "mode", "'loud'", "'shadow'"]),
        ({"cycle": {"max_period": 1}}, ["[cycle]", "max_period", "1", "2 to 16"]),
        ({"cycle": {"min_repeats": True}}, ["[cycle]", "min_repeats", "True", "integer"]),
        ({"near_duplicate": {"masks": ["emails"]}}, ["[near_duplicate]", "masks", "emails", "uuids"]),
        ({"near_duplicate": {"limit": 9, "window": 5}}, ["[near_duplicate]", "window", "5", "limit"]),
        ({"same_error": {"limit": 0}}, ["[same_error]", "limit", "0", ">= 1"]),
        ({"same_error": {"identical_limit": -1}}, ["[same_error]", "identical_limit", "-1", ">= 0"]),
        ({"circuit_breaker": {"progress_limit": "8"}}, ["[circuit_breaker]", "progress_limit", "'8'"]),
        ({"circuit_breaker": {"result_aware": 1}}, ["[circuit_breaker]", "result_aware", "true or false"]),
        ({"loop_brake": {"result_aware": "yes"}}, ["[loop_brake]", "result_aware", "'yes'"]),
        ({"tools": {"bash": {"duplicate_limit": 0}}}, ["[tools.bash]", "duplicate_limit", "0", ">= 1"]),
        ({"tools": {"bash": {"identity_args": "q"}}}, ["[tools.bash]", "identity_args", "'q'", "list"]),
        ({"tools": {"bash": {"colour": 1}}}, ["[tools.bash]", "colour", "allowed"]),
        ({"tools": {"bash": 3}}, ["[tools.bash]", "3", "table"]),
        ({"cycle": {"period": 3}}, ["[cycle]", "period", "max_period"]),
        ({"stall": {"edit_tools": "write_file"}}, ["[stall]", "edit_tools", "'write_file'", "list"]),
    ],
)
def test_bad_values_name_section_key_value_allowed(config: dict[str, Any], names: list[str]) -> None:
    with pytest.raises(ConfigError) as info:
        Guard.from_config(config)
    for name in names:
        assert name in str(info.value)


def test_camel_case_spellings_are_accepted() -> None:
    guard = Guard.from_config(
        {"near-duplicate": {"volatileKeys": ["page"]}, "same_error": {"identicalLimit": 2}}
    )
    assert guard.config.near_duplicate.volatile_keys == ("page",)
    assert guard.config.same_error.identical_limit == 2


def test_mode_at_the_top_of_a_file_is_the_guard_mode(tmp_path: Any) -> None:
    path = tmp_path / "loopfuse.toml"
    path.write_text('mode = "shadow"\n\n[guard]\nmax_agents = 5\n')
    guard = Guard.from_file(path)
    assert (guard.config.guard.mode, guard.config.guard.max_agents) == ("shadow", 5)
    decisions = [guard.check("bash", {"command": "ls"}, "a") for _ in range(8)]
    assert all(d.allowed for d in decisions) and decisions[-1].shadow


def test_mode_given_twice_must_agree() -> None:
    with pytest.raises(ConfigError, match="disagree"):
        Guard.from_config({"mode": "shadow", "guard": {"mode": "enforce"}})
    with pytest.raises(ConfigError, match="bogus"):
        Guard.from_config({"mode": "bogus"})
