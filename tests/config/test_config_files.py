"""Configuration errors name the file and suggest the closest spelling; JSON files load."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from loopfuse import ConfigError, Guard, load_config_file, parse_config
from loopfuse.config import parse_config_file


def test_unknown_key_suggests_the_closest_name() -> None:
    with pytest.raises(
        ConfigError, match=r"unknown key 'duplicate_limt' \(did you mean 'duplicate_limit'\?\)"
    ):
        parse_config({"circuit_breaker": {"duplicate_limt": 3}})
    with pytest.raises(ConfigError, match=r"\(did you mean 'same_result_limit'\?\)"):
        parse_config({"circuit-breaker": {"sameResultLimt": 3}})


def test_unknown_guard_key_lists_and_suggests_the_guard_wide_keys() -> None:
    with pytest.raises(ConfigError) as caught:
        parse_config({"guard": {"exmpt": ["search"]}})
    assert "unknown key 'exmpt' (did you mean 'exempt'?)" in str(caught.value)
    assert "exempt, ignore_args, incident_log, max_agents, mode, only" in str(caught.value)


@pytest.mark.parametrize(
    ("sections", "message"),
    [
        (
            {"circuit_breaker": 5},
            "GuardConfig circuit_breaker = 5 is not allowed: expected a CircuitBreakerConfig",
        ),
        (
            {"guard": {"exempt": ["a"]}},
            "GuardConfig guard = {'exempt': ['a']} is not allowed: expected a GuardSettings",
        ),
        ({"tools": {"x": 5}}, "GuardConfig tools['x'] = 5 is not allowed: expected a ToolRule"),
        ({"store": "redis://"}, "GuardConfig store = 'redis://' is not allowed: expected a StoreConfig"),
        (
            {"sections": {"bogus": 1}},
            "GuardConfig sections['bogus'] is not allowed: expected failures, stall",
        ),
    ],
)
def test_a_guard_config_built_in_code_names_a_section_of_the_wrong_type(
    sections: dict[str, object], message: str
) -> None:
    from loopfuse.config import GuardConfig

    with pytest.raises(ConfigError) as caught:
        GuardConfig(**sections)  # type: ignore[arg-type]
    assert str(caught.value) == message


def test_unknown_section_suggests_the_closest_name() -> None:
    with pytest.raises(
        ConfigError, match=r"unknown section 'circut_breaker' \(did you mean 'circuit_breaker'\?\)"
    ):
        parse_config({"circut_breaker": {}})
    with pytest.raises(ConfigError) as caught:
        parse_config({"zzzz": {}})
    assert "did you mean" not in str(caught.value)


def test_old_spellings_still_load() -> None:
    config = parse_config({"circuit-breaker": {"duplicateLimit": 3, "maxCallsPerAgent": 9}})
    assert (config.circuit_breaker.duplicate_limit, config.circuit_breaker.max_calls_per_agent) == (3, 9)


def test_errors_while_loading_name_the_file(tmp_path: Path) -> None:
    path = tmp_path / "loopfuse.toml"
    path.write_text("[circuit_breaker]\nduplicate_limit = 0\n")
    with pytest.raises(ConfigError) as caught:
        Guard.from_file(path)
    assert str(caught.value).startswith(
        f"configuration file {str(path)!r}: [circuit_breaker] duplicate_limit = 0"
    )
    path.write_text("[circuit_breaker]\nwindw = 10\n")
    with pytest.raises(ConfigError, match=r"loopfuse.toml'.*did you mean 'window'"):
        Guard.from_file(path)


@pytest.mark.parametrize(
    ("name", "text", "error"),
    [
        ("c.toml", "[guard]\nagent_idle_seconds = nan\n", "[guard] agent_idle_seconds = nan is not allowed"),
        ("c.toml", "[store]\nidle_expiry = inf\n", "[store] idle_expiry = inf is not allowed"),
        ("c.json", '{"store": {"timeout": NaN}}', "[store] timeout = nan is not allowed"),
        ("c.toml", "[guard]\nagent_idle_seconds = " + "9" * 400 + "\n", "[guard] agent_idle_seconds = 999"),
        ("c.toml", "[guard]\nmax_agents = " + "9" * 5000 + "\n", "is not valid TOML"),
        ("c.yaml", "guard:\n  max_agents: " + "9" * 5000 + "\n", "is not valid YAML"),
        ("c.toml", "[guard]\nabort_after_denials = false\n", "[guard] abort_after_denials = False is not"),
        ("c.yaml", "guard:\n  abort_after_denials: no\n", "[guard] abort_after_denials = False is not"),
        (
            "c.toml",
            "[duplicate]\nlimit = 300\n",
            "[duplicate] limit = 300 is not allowed: expected at most window",
        ),
        (
            "c.yaml",
            "tools:\n  1:\n    exempt: true\n  '1':\n    duplicate_limit: 2\n",
            "[tools] 1 is not allowed",
        ),
        ("c.yaml", "tools:\n  null:\n    exempt: true\n", "[tools] None is not allowed"),
    ],
)
def test_a_bad_value_in_a_file_is_a_config_error_naming_the_file(
    tmp_path: Path, name: str, text: str, error: str
) -> None:
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(ConfigError) as caught:
        Guard.from_file(path)
    assert str(caught.value).startswith(f"configuration file {str(path)!r}")
    assert error in str(caught.value)


def test_pyproject_errors_name_the_table(tmp_path: Path) -> None:
    path = tmp_path / "pyproject.toml"
    path.write_text("[tool.loopfuse.same_error]\nlimit = -1\n")
    with pytest.raises(ConfigError) as caught:
        Guard.from_file(path)
    assert f"configuration file {str(path)!r} [tool.loopfuse]: [same_error] limit = -1" in str(caught.value)


def test_json_configuration_file(tmp_path: Path) -> None:
    path = tmp_path / "loopfuse.json"
    path.write_text(json.dumps({"circuit_breaker": {"duplicate_limit": 2}, "guard": {"mode": "shadow"}}))
    assert load_config_file(path)["circuit_breaker"] == {"duplicate_limit": 2}
    guard = Guard.from_file(path)
    assert guard.config.circuit_breaker.duplicate_limit == 2 and guard.config.guard.mode == "shadow"
    path.write_text("{not json")
    with pytest.raises(ConfigError, match=r"loopfuse.json' is not valid JSON"):
        Guard.from_file(path)
    path.write_text("[1, 2]")
    with pytest.raises(ConfigError, match="JSON object"):
        Guard.from_file(path)


def test_cli_config_error_names_the_file(cli_env: None, tmp_path: Path) -> None:
    import subprocess
    import sys

    path = tmp_path / "bad.json"
    path.write_text('{"loop_brake": {"max_repeat": 2}}')
    done = subprocess.run(
        [sys.executable, "-m", "loopfuse.cli", "scan", str(tmp_path), "--config", str(path)],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 2
    assert "bad.json" in done.stderr and "did you mean 'max_repeats'" in done.stderr


def test_proxy_names_the_file_whose_store_url_redis_py_refuses(cli_env: None, tmp_path: Path) -> None:
    """The URL is checked when the guard is made, after the file was read: the file went unnamed."""
    import subprocess
    import sys

    path = tmp_path / "loopfuse.toml"
    path.write_text('[store]\nurl = "redis://127.0.0.1:1/0?socket_timout=0.1"\n')
    done = subprocess.run(
        [sys.executable, "-m", "loopfuse.cli", "proxy", "--config", str(path), "--", "true"],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 2
    assert "loopfuse.toml" in done.stderr and "no connection option 'socket_timout'" in done.stderr


def test_a_byte_order_mark_and_a_suffix_in_capitals_are_read(tmp_path: Path) -> None:
    """A TOML file saved with a BOM was "not valid TOML"; ``.JSON`` was read as TOML."""
    toml, upper = tmp_path / "loopfuse.toml", tmp_path / "LOOPFUSE.JSON"
    toml.write_text("\ufeff[duplicate]\nlimit = 3\n", encoding="utf-8")
    upper.write_text('{"duplicate": {"limit": 4}}')
    limits = [Guard.from_file(p).config.circuit_breaker.duplicate_limit for p in (toml, upper)]
    assert limits == [3, 4]


def test_a_memory_url_with_anything_after_it_is_refused_in_the_configuration() -> None:
    with pytest.raises(ConfigError, match=r"\[store\] url = 'memory://x' .*memory:// \(nothing after it\)"):
        parse_config({"store": {"url": "memory://x"}})


def test_a_redis_database_that_is_not_a_number_is_refused_when_the_file_is_read(tmp_path: Path) -> None:
    """Only a guard's store checked it: ``loopfuse incidents --config`` read the file in silence."""
    path = tmp_path / "loopfuse.toml"
    path.write_text('[store]\nurl = "redis://127.0.0.1:6379/abc"\n')
    with pytest.raises(ConfigError) as caught:
        parse_config_file(path)
    assert str(caught.value).startswith(f"configuration file {str(path)!r}")
    assert "[store] url = 'redis://127.0.0.1:6379/abc': the database 'abc' is not allowed" in str(
        caught.value
    )


@pytest.fixture
def cli_env(monkeypatch: pytest.MonkeyPatch) -> None:
    src = str(Path(__file__).resolve().parents[2] / "src")
    monkeypatch.setenv("PYTHONPATH", src)


def test_a_pyproject_named_without_a_loopfuse_table_is_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A misspelled table in a pyproject.toml named explicitly silently meant the defaults."""
    from loopfuse.config import find_config_file

    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text('[project]\nname = "app"\n\n[tool.loopfus.duplicate]\nlimit = 0\n')
    with pytest.raises(ConfigError, match=r"pyproject.toml' has no \[tool.loopfuse\] table"):
        Guard.from_file(pyproject)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("LOOPFUSE_CONFIG", raising=False)
    assert find_config_file() is None  # found in the folder, not named: a project without one
    pyproject.write_text("[tool.loopfuse.duplicate]\nlimit = 4\n")
    assert find_config_file() == Path("pyproject.toml")


@pytest.mark.parametrize("path", [None, 5, b"loopfuse.toml", "", " "])
def test_what_is_not_a_files_path_is_named(path: object) -> None:
    """None, a number or bytes raised a TypeError from pathlib; "" read the current folder."""
    with pytest.raises(ConfigError, match=r"configuration file.* is not allowed: expected a file's path"):
        Guard.from_file(path)  # type: ignore[arg-type]
    if path is not None:  # discover(None) looks for one
        with pytest.raises(ConfigError, match=r"is not allowed: expected a file's path"):
            Guard.discover(path)  # type: ignore[arg-type]
