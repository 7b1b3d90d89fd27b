"""Each breaker's Lua is one fragment (``stores/lua/breakers/<kind>.lua``): the Redis scripts of
a guard hold only its breakers' fragments, read the state hash once, and a new breaker plugs in
with its fragment and its registry line alone, ``decide.lua`` and ``observe.lua`` untouched; your
own breaker (``Guard(breakers=[...])``) with its ``lua_file`` and no registry line at all."""

from __future__ import annotations

import re
from importlib import resources
from pathlib import Path
from typing import Any, ClassVar

import pytest

from loopfuse import Guard
from loopfuse._calls import CallKey
from loopfuse._state import AgentState, ToolResult
from loopfuse.breakers import CallCap, CycleBreaker, SameErrorBreaker
from loopfuse.breakers.registry import REGISTRY
from loopfuse.decision import Denial
from loopfuse.errors import ConfigError
from loopfuse.stores.redis_scripts import ScriptSet, fragment_fields
from tests.store_fixtures import RedisServer, unique_prefix

LUA = resources.files("loopfuse.stores").joinpath("lua")
OFF = {"circuit_breaker": {"enabled": False}, "loop_brake": {"enabled": False}}


def units_in(script: str) -> list[str]:
    """The kinds whose fragment a script holds, in order."""
    return re.findall(r"^UNITS\['(\w+)'\] = function\(op, b, \w\)$", script, re.MULTILINE)


def state_fields(script: str) -> list[str]:
    """The fields the script reads of the agent's state hash, with its one HMGET per run."""
    (fields,) = re.findall(r"redis\.call\('HMGET', KEYS\[1\], ([^)]*)\)", script)
    return re.findall(r"'([^']+)'", fields)


@pytest.mark.parametrize("kind", list(REGISTRY))
def test_every_registered_breaker_brings_its_fragment(kind: str) -> None:
    assert REGISTRY[kind].lua == "fragment"
    source = LUA.joinpath(f"breakers/{kind}.lua").read_text(encoding="utf-8")
    assert units_in(source) == [kind]


def test_the_drivers_name_no_breaker() -> None:
    for name in ("decide", "observe", "pending", "common"):
        source = LUA.joinpath(f"{name}.lua").read_text(encoding="utf-8")
        code = "\n".join(line for line in source.splitlines() if not line.lstrip().startswith("--"))
        assert not [kind for kind in REGISTRY if f"'{kind}'" in code], name


def test_a_guards_scripts_hold_only_its_breakers_fragments() -> None:
    scripts = ScriptSet((CallCap(5), SameErrorBreaker(3, 0)), window=10, ttl_ms=1000)
    for script in (scripts.decide, scripts.flush):
        assert units_in(script) == ["cap", "same_error"]
        assert state_fields(script) == [
            "calls",
            "denials",
            "puts",
            "aw",
            "pend",
            "lr",
            "ld",
            "tid",
            "trep",
            "et",
            "ek",
            "es",
            "ec",
            "ecs",
        ]
        assert "HGET', KEYS[1]" not in script


def test_every_field_a_fragment_reads_from_the_shared_table_is_declared() -> None:
    for kind in REGISTRY:
        source = LUA.joinpath(f"breakers/{kind}.lua").read_text(encoding="utf-8")
        read = set(re.findall(r"\bF\.(\w+)", source)) | set(re.findall(r"\bF\['([^']+)'\]", source))
        assert read <= set(fragment_fields(source)), kind
        assert "HMGET" not in source, kind


def test_a_fragment_is_included_once_for_a_breaker_and_its_warner() -> None:
    cycle = CycleBreaker(3, 2)
    scripts = ScriptSet((cycle,), window=10, ttl_ms=1000)
    assert units_in(scripts.decide) == ["cycle"]
    assert state_fields(scripts.decide).count("ch") == 1


class CountState:
    __slots__ = ("calls",)

    def __init__(self) -> None:
        self.calls = 0


TOY_LUA = """
-- A test breaker: deny a call of `rm` once `limit` calls ran since the last successful result.
-- fields: toy:n
-- ops: check record observe
UNITS['toy'] = function(op, b, x)
  local n = tonumber(F['toy:n']) or 0
  if op == 'check' and x.tool == '=rm' and n >= b[2] then return n, b[2] end
  if op == 'record' then put('toy:n', n + 1) end
  if op == 'observe' and not x.failed then put('toy:n', 0) end
end
"""


class ToyBreaker:
    """Deny ``rm`` once ``limit`` calls ran since the agent's last successful result."""

    kind: Any = "toy"
    section: ClassVar[str] = "guard"  # no section of its own (config.SECTIONS is read at import)
    config_type: ClassVar[type | None] = None
    lua: ClassVar[str] = "fragment"
    lua_file: ClassVar[Path | None] = None
    records = True
    MESSAGES: ClassVar[dict[str, str]] = {
        "toy.limit": "{count} calls since the last success (toy {limit}). Stop."
    }

    def __init__(self, limit: int) -> None:
        self.limit = limit

    @classmethod
    def from_config(cls, config: Any) -> ToyBreaker:
        return cls(2)

    def allowed_repeats(self) -> int | None:
        return None

    def check(self, state: AgentState, call: CallKey) -> Denial | None:
        n = state.unit("toy", CountState).calls
        return Denial("toy", n, self.limit, "toy.limit") if call.tool == "rm" and n >= self.limit else None

    def record(self, state: AgentState, call: CallKey) -> None:
        state.unit("toy", CountState).calls += 1

    def refused(self, state: AgentState, call: CallKey) -> None:
        """A refusal changes nothing."""

    def observe(self, state: AgentState, call: CallKey, result: ToolResult) -> None:
        if result.ok is not False:
            state.unit("toy", CountState).calls = 0

    def lua_settings(self) -> tuple[int, ...]:
        return (self.limit,)

    def script_rule(self, code: str, tool: str) -> str:
        return "toy.limit"


@pytest.fixture
def toy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> type[ToyBreaker]:
    """The toy breaker registered (built from any configuration at limit 2), its fragment a
    file outside the package."""
    path = tmp_path / "toy.lua"
    path.write_text(TOY_LUA, encoding="utf-8")
    monkeypatch.setattr(ToyBreaker, "lua_file", path)
    monkeypatch.setitem(REGISTRY, "toy", ToyBreaker)
    return ToyBreaker


@pytest.mark.parametrize("store", ["memory", "redis"])
def test_a_new_breaker_runs_on_redis_with_its_fragment_alone(
    toy: type[ToyBreaker], store: str, redis_server: RedisServer
) -> None:
    url = redis_server.url if store == "redis" else "memory://"
    guard = Guard.from_config({**OFF, "store": {"url": url, "prefix": unique_prefix()}})
    seen, denied = [], None
    for tool, ok in (("ls", True), ("rm", False), ("ls", False), ("rm", None), ("ls", True), ("rm", None)):
        decision = guard.check(tool, {"path": "/tmp"}, "agent")
        seen.append((tool, decision.kind, decision.count))
        denied = denied if decision.allowed else decision
        if decision.allowed and ok is not None:
            guard.record_result(tool, {"path": "/tmp"}, "out", "agent", ok=ok)
    guard.close()
    assert seen == [
        ("ls", None, 0),
        ("rm", None, 0),  # one call since the last success
        ("ls", None, 0),
        ("rm", "toy", 2),  # two calls since: denied, and not counted
        ("ls", None, 0),
        ("rm", None, 0),  # the success reset it
    ]
    assert denied is not None and denied.rule == "toy.limit"
    assert "(toy: 2 times, limit 2)" in (denied.message or "")


def toy_with_fragment(tmp_path: Path, lua: str = TOY_LUA) -> ToyBreaker:
    """A toy breaker of a class of your own (no registry line) whose ``lua_file`` is ``lua``."""
    path = tmp_path / "toy.lua"
    path.write_text(lua, encoding="utf-8")
    own = type("OwnToy", (ToyBreaker,), {"lua_file": path})
    breaker: ToyBreaker = own(2)
    return breaker


@pytest.mark.parametrize("store", ["memory", "redis"])
def test_your_own_breaker_with_its_fragment_runs_on_redis_unregistered(
    tmp_path: Path, store: str, redis_server: RedisServer
) -> None:
    url = redis_server.url if store == "redis" else "memory://"
    store_config = {"url": url, "prefix": unique_prefix()}
    guard = Guard.from_config({**OFF, "store": store_config}, breakers=[toy_with_fragment(tmp_path)])
    seen = []
    for tool, ok in (("ls", False), ("rm", None), ("rm", None), ("ls", True), ("rm", None)):
        decision = guard.check(tool, {"path": "/tmp"}, "agent")
        seen.append((tool, decision.kind, decision.rule))
        if decision.allowed and ok is not None:
            guard.record_result(tool, {"path": "/tmp"}, "out", "agent", ok=ok)
    guard.close()
    assert seen == [
        ("ls", None, ""),
        ("rm", None, ""),  # one call since the last success
        ("rm", "toy", "toy.limit"),  # two: denied, and not counted
        ("ls", None, ""),
        ("rm", None, ""),  # the success reset it
    ]


def test_your_own_breaker_without_a_fragment_is_refused_by_the_redis_store() -> None:
    with pytest.raises(ConfigError, match=r"cannot evaluate the breaker\(s\) toy: .*lua_file"):
        Guard(breakers=[ToyBreaker(2)], store="redis://127.0.0.1:1")


def test_your_own_breaker_cannot_take_a_kind_the_library_runs(tmp_path: Path) -> None:
    breaker = toy_with_fragment(tmp_path)
    breaker.kind = "cycle"
    with pytest.raises(ConfigError, match="the breaker kind 'cycle' is CycleBreaker's on the Redis store"):
        Guard(breakers=[breaker], store="redis://127.0.0.1:1")


@pytest.mark.parametrize(
    ("lua", "says"),
    [
        (None, "No such file"),
        (
            TOY_LUA.replace("-- fields: toy:n\n", ""),
            "uses the field 'toy:n' that no '-- fields:' line declares",
        ),
        (TOY_LUA.replace("-- ops: check record observe", "-- ops: record remember"), "names the op"),
    ],
    ids=["missing", "undeclared field", "unknown op"],
)
def test_a_fragment_the_store_cannot_load_is_a_config_error_naming_its_file(
    tmp_path: Path, lua: str | None, says: str
) -> None:
    breaker = toy_with_fragment(tmp_path, lua or TOY_LUA)
    path = tmp_path / "toy.lua"
    if lua is None:
        path.unlink()
    with pytest.raises(
        ConfigError, match=f"cannot load the Lua fragment\\(s\\) {re.escape(str(path))}: .*{says}"
    ):
        Guard(breakers=[breaker], store="redis://127.0.0.1:1")


def test_lua_settings_that_are_not_integers_are_a_config_error(tmp_path: Path) -> None:
    breaker = toy_with_fragment(tmp_path)
    breaker.limit = "2"  # type: ignore[assignment]
    with pytest.raises(
        ConfigError, match=r"OwnToy.lua_settings\(\) = \('2',\) is not allowed: expected a tuple of integers"
    ):
        Guard(breakers=[breaker], store="redis://127.0.0.1:1")


def test_a_lua_error_in_your_fragment_fails_open_with_redis_message_logged(
    tmp_path: Path, redis_server: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    breaker = toy_with_fragment(tmp_path, TOY_LUA.replace("then return n", "then retrun n"))
    store = {"url": redis_server.url, "prefix": unique_prefix()}
    guard = Guard.from_config({**OFF, "store": store}, breakers=[breaker])
    assert guard.check("rm", {"path": "/tmp"}, "agent").allowed
    assert guard.stats()["fail_open"] == {"store": 1}
    assert "Error compiling script" in caplog.text
    guard.close()


class Hostile(ToyBreaker):
    """A breaker whose Redis methods raise when looked up."""

    lua_file: ClassVar[Path | None] = Path("toy.lua")

    def __getattribute__(self, name: str) -> Any:
        if name in ("lua_settings", "script_rule"):
            raise RuntimeError("boom")
        return super().__getattribute__(name)


def test_a_breaker_whose_attributes_raise_is_refused_by_the_redis_store() -> None:
    with pytest.raises(ConfigError, match=r"cannot evaluate the breaker\(s\) toy"):
        Guard(breakers=[Hostile(2)], store="redis://127.0.0.1:1")


def test_a_lua_file_that_is_not_a_path_is_a_config_error(tmp_path: Path) -> None:
    breaker = toy_with_fragment(tmp_path)
    type(breaker).lua_file = 42  # type: ignore[assignment]  # (a class of this test's own)
    with pytest.raises(ConfigError, match="cannot load the Lua fragment"):
        Guard(breakers=[breaker], store="redis://127.0.0.1:1")


def test_a_script_rule_that_raises_leaves_the_denial_standing_unnamed(
    tmp_path: Path, redis_server: RedisServer
) -> None:
    breaker = toy_with_fragment(tmp_path)

    def script_rule(code: str, tool: str) -> str:
        raise RuntimeError("boom")

    type(breaker).script_rule = staticmethod(script_rule)  # type: ignore[assignment]
    store = {"url": redis_server.url, "prefix": unique_prefix()}
    guard = Guard.from_config({**OFF, "store": store}, breakers=[breaker])
    decisions = [guard.check("rm", {"path": "/tmp"}, "agent") for _ in range(3)]
    guard.close()
    assert [(d.kind, d.rule) for d in decisions] == [(None, ""), (None, ""), ("toy", "")]
