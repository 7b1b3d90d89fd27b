"""The loop brake standalone (``LoopBrake``, ``wrap_execute``, ``decorate_tool``); inside a Guard: tests/guard/test_brake.py."""

from __future__ import annotations

import asyncio
import hashlib
import json
from typing import Any

import pytest

from loopfuse import ConfigError, LoopBrake, LoopBrakeError, decorate_tool, wrap_execute


def attempts(brake: LoopBrake, calls: list[tuple[str, dict[str, Any]]], session: str = "s") -> list[Any]:
    out: list[Any] = []
    for tool, args in calls:
        try:
            brake.check(tool=tool, args=args, session=session)
            out.append("ok")
        except LoopBrakeError as exc:
            out.append(exc.count)
    return out


def test_fourth_identical_call_in_a_row_is_refused_and_every_further_one() -> None:
    assert attempts(LoopBrake(3), [("t", {"a": 1})] * 6) == ["ok", "ok", "ok", 4, 5, 6]


def test_a_different_call_resets_the_streak_to_one() -> None:
    a, b = ("t", {"a": 1}), ("t", {"a": 2})
    assert attempts(LoopBrake(2), [a, a, a, b, a, a, a]) == ["ok", "ok", 3, "ok", "ok", "ok", 3]


def test_error_carries_the_documented_attributes_and_no_argument_values() -> None:
    brake = LoopBrake(1)
    args = {"secret": "hunter2-canary"}
    brake.check(tool="bash", args=args, session="sess-1")
    with pytest.raises(LoopBrakeError) as info:
        brake.check(tool="bash", args=args, session="sess-1")
    err = info.value
    digest = hashlib.sha256(("bash\n" + json.dumps(args, sort_keys=True, separators=(",", ":"))).encode())
    assert err.code == "LOOP_BRAKE" and err.plugin == "loopfuse"
    assert (err.tool_name, err.count, err.max_repeats, err.session_id) == ("bash", 2, 1, "sess-1")
    assert err.hash_prefix == digest.hexdigest()[:12]
    assert "hunter2" not in str(err) and "hunter2" not in repr(vars(err))


def test_argument_order_does_not_matter() -> None:
    calls = [("t", {"a": 1, "b": {"c": 1, "d": 2}}), ("t", {"b": {"d": 2, "c": 1}, "a": 1})]
    assert attempts(LoopBrake(1), calls) == ["ok", 2]


def test_sessions_are_separate() -> None:
    brake = LoopBrake(1)
    brake.check(tool="t", args={}, session="one")
    brake.check(tool="t", args={}, session="two")
    with pytest.raises(LoopBrakeError):
        brake.check(tool="t", args={}, session="one")


def test_max_repeats_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOOPFUSE_MAX_REPEATS", "5")
    assert LoopBrake().max_repeats == 5
    assert LoopBrake(2).max_repeats == 2
    monkeypatch.delenv("LOOPFUSE_MAX_REPEATS")
    assert LoopBrake().max_repeats == 3


@pytest.mark.parametrize("value", [0, -1, True, 2.5, "3"])
def test_invalid_max_repeats_argument(value: Any) -> None:
    with pytest.raises(ConfigError, match="max_repeats"):
        LoopBrake(value)


@pytest.mark.parametrize("raw", ["zero", "0", "1.5", "true"])
def test_invalid_max_repeats_environment_names_the_variable(
    monkeypatch: pytest.MonkeyPatch, raw: str
) -> None:
    monkeypatch.setenv("LOOPFUSE_MAX_REPEATS", raw)
    with pytest.raises(ConfigError, match="LOOPFUSE_MAX_REPEATS"):
        LoopBrake()


def test_wrap_execute_never_runs_the_function_on_a_refusal() -> None:
    ran: list[str] = []

    def search(query: str) -> str:
        ran.append(query)
        return "results"

    guarded = wrap_execute(search, LoopBrake(2), tool="search", session_id="s")
    assert guarded("x") == "results" and guarded(query="x") == "results"
    with pytest.raises(LoopBrakeError):
        guarded("x")
    assert ran == ["x", "x"]


def test_wrap_execute_is_async_for_async_functions() -> None:
    calls = 0

    async def fetch(url: str) -> str:
        nonlocal calls
        calls += 1
        return "page"

    guarded = wrap_execute(fetch, LoopBrake(1), tool="fetch", session_id="s")
    assert asyncio.iscoroutinefunction(guarded)
    assert asyncio.run(guarded("u")) == "page"
    with pytest.raises(LoopBrakeError):
        asyncio.run(guarded("u"))
    assert calls == 1


def test_decorate_tool_copies_a_mapping_definition() -> None:
    def execute(params: dict[str, Any]) -> str:
        return "done"

    tool = {"name": "deploy", "description": "Deploy", "execute": execute}
    wrapped = decorate_tool(tool, LoopBrake(1))
    assert tool["execute"] is execute and wrapped["execute"] is not execute
    assert wrapped["execute"]({"env": "prod"}) == "done"
    with pytest.raises(LoopBrakeError) as info:
        wrapped["execute"]({"env": "prod"})
    assert info.value.tool_name == "deploy"


def test_decorate_tool_copies_an_object_definition() -> None:
    class Tool:
        name = "search"

        def __init__(self) -> None:
            self.calls = 0

        def run(self, query: str) -> str:
            self.calls += 1
            return "ok"

    original = Tool()
    wrapped = decorate_tool(original, LoopBrake(1))
    assert wrapped.run("q") == "ok"
    with pytest.raises(LoopBrakeError):
        wrapped.run("q")
    assert original.run("q") == "ok"  # the original is untouched and unguarded
    assert original.run("q") == "ok"


def test_decorate_tool_rejects_a_definition_without_callable() -> None:
    with pytest.raises(TypeError, match="name"):
        decorate_tool({"name": "x"}, LoopBrake())


class Unprintable:
    def __str__(self) -> str:
        raise RuntimeError("no text")


def test_a_session_that_cannot_be_shown_still_gets_the_brakes_error() -> None:
    """Its ``__str__`` raising made the refusal a RuntimeError, not the documented LoopBrakeError."""
    brake, session = LoopBrake(max_repeats=1), Unprintable()
    brake.check("t", {}, session)
    with pytest.raises(LoopBrakeError) as refused:
        brake.check("t", {}, session)
    assert refused.value.session_id == "<Unprintable>"
