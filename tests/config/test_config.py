"""Configuration: spellings, validation at construction, files, discovery."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from loopfuse import ConfigError, Guard, find_config_file, parse_config

NAN, INF = float("nan"), float("inf")
TIMEOUTS = ("timeout", "connect_timeout", "pool_timeout", "idle_expiry")


def test_defaults() -> None:
    config = parse_config({})
    cb = config.circuit_breaker
    assert (cb.duplicate_limit, cb.window, cb.max_calls_per_agent) == (6, 200, 300)
    assert cb.exempt == ("todo_write", "ask_user_question", "exit_plan_mode")
    assert cb.ignore_args == ("description", "explanation", "reason", "thought", "purpose")
    assert config.loop_brake is None
    assert config.guard.abort_after_denials == 3


def test_original_plugin_spellings_are_accepted() -> None:
    config = parse_config(
        {
            "circuit-breaker": {
                "duplicateLimit": 4,
                "maxCallsPerAgent": 9,
                "ignoreArgs": ["note"],
                "denyMessage": "stop {tool}",
                "incidentLog": "/tmp/x.jsonl",
            },
            "loop-brake": {"maxRepeats": 2},
        }
    )
    cb = config.circuit_breaker
    assert (cb.duplicate_limit, cb.max_calls_per_agent, cb.ignore_args) == (4, 9, ("note",))
    assert (cb.deny_message, cb.incident_log) == ("stop {tool}", "/tmp/x.jsonl")
    assert config.loop_brake is not None and config.loop_brake.max_repeats == 2


@pytest.mark.parametrize(
    ("mapping", "words"),
    [
        ({"circuit_breakers": {}}, ["circuit_breakers", "circuit_breaker", "loop_brake"]),
        (
            {"circuit_breaker": {"duplicate_limt": 3}},
            ["circuit_breaker", "duplicate_limt", "duplicate_limit"],
        ),
        (
            {"circuit_breaker": {"duplicate_limit": "6"}},
            ["circuit_breaker", "duplicate_limit", "'6'", "integer"],
        ),
        ({"circuit_breaker": {"duplicate_limit": 0}}, ["duplicate_limit", "0", ">= 1"]),
        ({"circuit_breaker": {"duplicate_limit": True}}, ["duplicate_limit", "True"]),
        ({"circuit_breaker": {"window": 3, "duplicate_limit": 6}}, ["window", "3", "duplicate_limit"]),
        ({"circuit_breaker": {"max_calls_per_agent": -1}}, ["max_calls_per_agent", "-1", ">= 0"]),
        ({"circuit_breaker": {"exempt": "bash"}}, ["exempt", "'bash'", "list"]),
        ({"circuit_breaker": {"ignore_args": [1]}}, ["ignore_args", "strings"]),
        ({"circuit_breaker": {"enabled": "yes"}}, ["enabled", "'yes'", "true or false"]),
        ({"circuit_breaker": {"deny_message": "stop {args}"}}, ["deny_message", "{tool}"]),
        ({"guard": {"deny_message": "stop {tool.upper}"}}, ["deny_message", "{tool.upper}", "{tool}"]),
        ({"guard": {"deny_message": "stop {count[0]}"}}, ["deny_message", "{count[0]}", "{tool}"]),
        ({"guard": {"deny_message": "stop {count:>99999999}"}}, ["deny_message", "{count:>99999999}"]),
        ({"circuit_breaker": {"incident_log": 5}}, ["incident_log", "5", "string"]),
        ({"loop_brake": {"max_repeats": 0}}, ["loop_brake", "max_repeats", "0"]),
        ({"guard": {"abort_after_denials": -2}}, ["guard", "abort_after_denials", "-2"]),
        ({"store": {"redis_functions": "no"}}, ["store", "redis_functions", "'no'", "true or false"]),
        (
            {"circuit_breaker": {"duplicateLimit": 3, "duplicate_limit": 4}},
            ["duplicateLimit", "duplicate_limit"],
        ),
        ({"circuit_breaker": 3}, ["circuit_breaker", "3", "table"]),
        # NaN and infinity are not a number of seconds; nor is an int too large for a float
        (
            {"guard": {"agent_idle_seconds": NAN}},
            ["[guard] agent_idle_seconds = nan", "a number >= 0.001 and finite"],
        ),
        (
            {"guard": {"agent_idle_seconds": INF}},
            ["[guard] agent_idle_seconds = inf", "a number >= 0.001 and finite"],
        ),
        *[
            (
                {"store": {key: bad}},
                [f"[store] {key} = {bad!r}", "finite" if key == "idle_expiry" else "to 3600"],
            )
            for key in TIMEOUTS
            for bad in (NAN, INF)
        ],
        (
            {"guard": {"agent_idle_seconds": 10**400}},
            ["[guard] agent_idle_seconds = 1000", "a number >= 0.001 and finite"],
        ),
        (
            {"store": {"timeout": 10**5000}},
            ["[store] timeout = <int too long to show>", "a number from 0.001 to 3600"],
        ),
        # a timeout past what a socket takes made every check fail open, even under "deny"
        ({"store": {"timeout": 1e10}}, ["[store] timeout = 10000000000.0", "from 0.001 to 3600"]),
        ({"store": {"pool_timeout": 3601}}, ["[store] pool_timeout = 3601", "from 0.001 to 3600"]),
        # null is not 0: it turned escalation off in silence
        ({"guard": {"abort_after_denials": None}}, ["[guard] abort_after_denials = None", "0 turns"]),
        # a tool's limit above its breaker's window never denied
        (
            {"tools": {"search": {"duplicate_limit": 250}}},
            [
                "[tools.search] duplicate_limit = 250 is not allowed: expected at most [duplicate] window (200)"
            ],
        ),
        (
            {"tools": {"search": {"near_duplicate_limit": 60}}},
            ["[tools.search] near_duplicate_limit = 60", "at most [near_duplicate] window (50)"],
        ),
        # a bool or a float is not the integer 0 that turns a key off
        ({"guard": {"abort_after_denials": False}}, ["[guard] abort_after_denials = False", "integer"]),
        ({"guard": {"abort_after_denials": 0.0}}, ["[guard] abort_after_denials = 0.0", "integer"]),
        ({"cycle": {"warn_at": False}}, ["[cycle] warn_at = False", "0 (off) or an integer >= 2"]),
        ({"cycle": {"warn_at": 0.0}}, ["[cycle] warn_at = 0.0", "0 (off) or an integer >= 2"]),
        # the window cross-check names the key the file wrote, in its spelling
        (
            {"duplicate": {"limit": 300}},
            ["[duplicate] limit = 300 is not allowed: expected at most window (200)"],
        ),
        (
            {"duplicate": {"limit": 7, "window": 5}},
            ["[duplicate] window = 5 is not allowed: expected at least limit (7)"],
        ),
        (
            {"duplicate": {"window": 5}},
            ["[duplicate] window = 5 is not allowed: expected at least limit (6)"],
        ),
        (
            {"circuit_breaker": {"window": 5}, "duplicate": {"limit": 7}},
            ["[circuit_breaker] window = 5 is not allowed: expected at least [duplicate] limit (7)"],
        ),
        (
            {"circuit-breaker": {"duplicateLimit": 300}},
            ["[circuit_breaker] duplicate_limit = 300 is not allowed: expected at most window (200)"],
        ),
        (
            {"near_duplicate": {"limit": 90}},
            ["[near_duplicate] limit = 90 is not allowed: expected at most window (50)"],
        ),
        # a tool's name is a string (YAML reads `1:` as a number, `null:` as None)
        (
            {"tools": {1: {"exempt": True}, "1": {"duplicate_limit": 2}}},
            ["[tools] 1 is not allowed", "string"],
        ),
        ({"tools": {None: {"exempt": True}}}, ["[tools] None is not allowed", "string"]),
        # a warn_at at or above every limit of its breaker would never warn
        (
            {"duplicate": {"limit": 3, "warn_at": 100}},
            ["[duplicate] warn_at = 100 is not allowed", "below the highest of its breaker's limits (5)"],
        ),
        ({"loop_brake": {"max_repeats": 3, "warn_at": 3}}, ["[loop_brake] warn_at = 3", "limits (3)"]),
        ({"stall": {"warn_at": 12}}, ["[stall] warn_at = 12", "limits (12)"]),
        # a window holds at most 10,000 calls: memory per agent stays bounded
        ({"duplicate": {"window": 10_001}}, ["[duplicate] window = 10001", "from 1 to 10000"]),
        ({"near_duplicate": {"window": 10**9}}, ["[near_duplicate] window = 1000000000", "from 1 to 10000"]),
        ({"stall": {"window": 20_000}}, ["[stall] window = 20000", "from 2 to 10000"]),
    ],
)
def test_errors_name_section_key_value_and_what_is_allowed(mapping: dict[str, Any], words: list[str]) -> None:
    with pytest.raises(ConfigError) as info:
        Guard.from_config(mapping)
    for word in words:
        assert word in str(info.value)


@pytest.mark.parametrize("config", [{"duplicate": {"limit": 2}}, "loopfuse.toml", Path("loopfuse.toml")])
def test_a_guard_given_a_mapping_or_a_path_says_where_they_go(config: Any) -> None:
    """``Guard({...})`` raised AttributeError from inside the guard."""
    with pytest.raises(ConfigError, match=r"expected a GuardConfig .*Guard\.from_config.*Guard\.from_file"):
        Guard(config)


def test_zero_abort_after_denials_still_turns_escalation_off() -> None:
    assert parse_config({"guard": {"abort_after_denials": 0}}).guard.abort_after_denials is None
    assert parse_config({"cycle": {"warn_at": 0}}).cycle.warn_at == 0


def test_config_error_is_a_value_error() -> None:
    with pytest.raises(ValueError):
        parse_config({"nope": {}})


def test_from_file_toml(tmp_path: Path) -> None:
    path = tmp_path / "loopfuse.toml"
    path.write_text("[circuit_breaker]\nduplicate_limit = 1\n")
    guard = Guard.from_file(path)
    assert guard.check("f", {}, "a").allowed and not guard.check("f", {}, "a").allowed


def test_from_file_yaml(tmp_path: Path) -> None:
    path = tmp_path / "loopfuse.yaml"
    path.write_text("circuit_breaker:\n  duplicate_limit: 1\nloop_brake:\n  max_repeats: 4\n")
    guard = Guard.from_file(path)
    assert guard.config.circuit_breaker.duplicate_limit == 1
    assert guard.config.loop_brake is not None and guard.config.loop_brake.max_repeats == 4


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("loopfuse.yaml", "duplicate:\n  limit: 3\n  window: 50\n  limit: 9\n"),
        ("loopfuse.json", '{"duplicate": {"limit": 3, "limit": 9}}'),
        ("loopfuse.toml", "[duplicate]\nlimit = 3\nlimit = 9\n"),
    ],
)
def test_a_key_written_twice_is_an_error_in_every_format(tmp_path: Path, name: str, text: str) -> None:
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(ConfigError, match=f"configuration file .*{name}.* is not valid") as caught:
        Guard.from_file(path)
    assert "limit" in str(caught.value) or name.endswith(".toml")


def test_a_yaml_merge_key_set_again_is_no_error(tmp_path: Path) -> None:
    path = tmp_path / "loopfuse.yaml"
    path.write_text("base: &b\n  limit: 3\nduplicate:\n  <<: *b\n  limit: 4\n")
    from loopfuse._config_files import load_config_file

    assert load_config_file(path)["duplicate"] == {"limit": 4}


def test_yaml_without_pyyaml_says_how_to_install_it(tmp_path: Path) -> None:
    path = tmp_path / "c.yml"
    path.write_text("circuit_breaker: {}\n")
    script = textwrap.dedent(
        f"""
        import sys
        class Block:
            def find_spec(self, name, path=None, target=None):
                if name == "yaml" or name.startswith("yaml."):
                    raise ImportError("blocked")
        sys.meta_path.insert(0, Block())
        from loopfuse import Guard, ConfigError
        try:
            Guard.from_file({str(path)!r})
        except ConfigError as exc:
            print(exc)
        """
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert "pip install 'loopfuse[yaml]'" in out.stdout


def test_invalid_toml_and_missing_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("[circuit_breaker\n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        Guard.from_file(bad)
    with pytest.raises(ConfigError, match="cannot be read"):
        Guard.from_file(tmp_path / "missing.toml")


def test_discovery_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("LOOPFUSE_CONFIG", raising=False)
    assert find_config_file() is None
    (tmp_path / "pyproject.toml").write_text("[project]\nname='x'\n")
    assert find_config_file() is None
    (tmp_path / "pyproject.toml").write_text("[tool.loopfuse.circuit_breaker]\nduplicate_limit = 2\n")
    assert find_config_file() == Path("pyproject.toml")
    assert Guard.discover().config.circuit_breaker.duplicate_limit == 2
    (tmp_path / "loopfuse.toml").write_text("[circuit_breaker]\nduplicate_limit = 3\n")
    assert Guard.discover().config.circuit_breaker.duplicate_limit == 3
    env_file = tmp_path / "env.toml"
    env_file.write_text("[circuit_breaker]\nduplicate_limit = 4\n")
    monkeypatch.setenv("LOOPFUSE_CONFIG", os.fspath(env_file))
    assert Guard.discover().config.circuit_breaker.duplicate_limit == 4
    explicit = tmp_path / "explicit.toml"
    explicit.write_text("[circuit_breaker]\nduplicate_limit = 5\n")
    assert Guard.discover(explicit).config.circuit_breaker.duplicate_limit == 5


@pytest.mark.parametrize(
    "mapping",
    [
        {"stall": {"warn_at": 11}},  # below tool_error_limit (12): it warns before that rule denies
        {"duplicate": {"warn_at": 9}, "tools": {"read": {"duplicate_limit": 20}}},  # below read's limit
        {"cycle": {"warn_at": 2}},
    ],
)
def test_a_warn_at_below_some_limit_of_its_breaker_is_accepted(mapping: dict[str, Any]) -> None:
    Guard.from_config(mapping)
