"""One plain test per crash found in issue 15: each fails open, counted by cause, on both stores."""

from __future__ import annotations

import asyncio
import logging
import tracemalloc
from typing import Any

import pytest

from loopfuse import Guard
from loopfuse._agents import agent_label, agent_name
from loopfuse.stores.memory import agent_label as memory_agent_label
from tests.store_fixtures import RedisServer

from .conftest import guard_on
from .hostile_objects import (
    KeyWithRaisingCompare,
    getattr_raising,
    items_raising_dict,
    slots_hash_raising,
)

Store = tuple[str, RedisServer | None]
OK_ONLY = {"circuit_breaker": {"duplicate_limit": 1, "window": 8}}


def every_entry_point(guard: Guard, tool: Any, args: Any, agent: Any, result: Any = "r") -> list[bool]:
    """check, acheck and record_result once each: the two decisions (record_result returns None)."""
    first = guard.check(tool, args, agent).allowed
    second = asyncio.run(guard.acheck(tool, args, agent)).allowed
    assert guard.record_result(tool, args, result, agent) is None
    return [first, second]


def test_dict_keys_whose_comparisons_raise_fail_open(store_kind: Store) -> None:
    guard = guard_on(*store_kind, OK_ONLY)
    args = {KeyWithRaisingCompare(1, RuntimeError): 1, KeyWithRaisingCompare(2, RuntimeError): 2}
    assert every_entry_point(guard, "read", args, "a", result=args) == [True, True]
    assert guard.stats()["fail_open"] == {"unserializable": 3}  # record_result: its call cannot be keyed
    guard.close()


def test_a_result_whose_keys_raise_is_ignored(store_kind: Store) -> None:
    guard = guard_on(*store_kind, OK_ONLY)
    result = {KeyWithRaisingCompare(1, RuntimeError): 1, KeyWithRaisingCompare(2, RuntimeError): 2}
    assert guard.check("read", {"p": 1}, "a").allowed
    guard.record_result("read", {"p": 1}, result, "a")
    assert guard.stats()["fail_open"] == {"result": 1}
    guard.close()


def test_dict_subclass_whose_items_raise_fails_open(store_kind: Store) -> None:
    guard = guard_on(*store_kind, OK_ONLY)
    args = items_raising_dict(RuntimeError)
    assert every_entry_point(guard, "read", args, "a", result=args) == [True, True]
    assert guard.stats()["fail_open"] == {"unserializable": 3}
    guard.close()


def test_unhashable_tool_name_fails_open(store_kind: Store) -> None:
    guard = guard_on(*store_kind, OK_ONLY)
    decisions = [guard.check(["a"], {}, "a"), asyncio.run(guard.acheck(["a"], {}, "a"))]  # type: ignore[arg-type]
    guard.record_result(["a"], {}, "r", "a")  # type: ignore[arg-type]
    assert [d.allowed for d in decisions] == [True, True]
    assert decisions[0].tool == "<invalid tool name>"
    assert guard.stats()["fail_open"] == {"tool_name": 3}
    guard.close()


def test_str_subclass_tool_name_is_judged_as_its_text(store_kind: Store) -> None:
    class Tool(str):
        def __hash__(self) -> int:
            raise RuntimeError("hostile")

        def __eq__(self, other: object) -> bool:
            raise RuntimeError("hostile")

    guard = guard_on(*store_kind, OK_ONLY)
    assert [guard.check(Tool("read"), {}, "a").allowed for _ in range(2)] == [True, False]
    assert guard.check("read", {}, "a").kind == "duplicate"  # the same tool as plain "read"
    guard.close()


def test_agent_whose_getattr_raises_fails_open(store_kind: Store, caplog: pytest.LogCaptureFixture) -> None:
    kind, _ = store_kind
    guard = guard_on(*store_kind, OK_ONLY)
    agent = getattr_raising(RuntimeError)
    with caplog.at_level(logging.WARNING, logger="loopfuse"):
        got = [guard.check("read", {}, agent).allowed for _ in range(3)]
    if kind == "memory":  # keyed by identity in process: the first denial logs it as an object
        assert got == [True, False, False]
        assert "for agent <object>" in caplog.text
    else:  # no name every process agrees on: fails open
        assert got == [True, True, True]
        assert guard.stats()["fail_open"] == {"agent_identity": 3}
    guard.close()


def test_agent_with_slots_and_raising_hash_fails_open_on_both_stores(store_kind: Store) -> None:
    guard = guard_on(*store_kind, OK_ONLY)
    agent = slots_hash_raising(RuntimeError)
    assert (
        every_entry_point(guard, "read", {}, agent) + every_entry_point(guard, "read", {}, agent)
        == [True] * 4
    )
    assert guard.stats()["fail_open"] == {"agent_identity": 4, "result": 2}
    guard.close()


def test_agent_without_a_name_fails_open_on_redis_instead_of_raising(store_kind: Store) -> None:
    kind, _ = store_kind
    guard = guard_on(*store_kind, OK_ONLY)

    class Anonymous:
        pass

    agent = Anonymous()
    got = [guard.check("read", {}, agent).allowed for _ in range(2)]
    assert got == ([True, False] if kind == "memory" else [True, True])
    guard.close()


class Agent:
    def __init__(self, **attributes: Any) -> None:
        self.__dict__.update(attributes)


def test_one_naming_rule_for_redis_keys_and_log_labels() -> None:
    from loopfuse.stores.redis import agent_id

    agent = Agent(uuid="u-1", agent_id="a-1", name="n")
    assert (
        agent_name(agent) == agent_id(agent) == agent_label(agent) == "a-1"
    )  # id, agent_id, session_id, name, uuid
    assert memory_agent_label is agent_label
    assert agent_label(Agent(token="s3cret", model="m")) == {"agent_keys": ["model", "token"]}
    assert agent_name(getattr_raising(RuntimeError)) is None
    assert agent_label(getattr_raising(RuntimeError)) == {"agent_keys": []}
    assert agent_label(42) == agent_name(42) == "42" and agent_name(True) is None


def test_an_agent_whose_str_raises_still_gets_loop_aborted() -> None:
    from loopfuse import LoopAbortedError

    class Loud:
        def __str__(self) -> str:
            raise RuntimeError("hostile")

    guard = Guard.from_config(
        {"circuit_breaker": {"duplicate_limit": 1, "result_limit": 1}, "guard": {"abort_after_denials": 1}}
    )
    run = guard.wrap(lambda: "ran", tool="t", agent=Loud())
    assert run() == "ran"
    with pytest.raises(LoopAbortedError, match="Loud"):
        run()


def test_forgetting_an_agent_that_cannot_be_keyed_does_nothing(store_kind: Store) -> None:
    guard = guard_on(*store_kind, OK_ONLY)
    for agent in (slots_hash_raising(RuntimeError), getattr_raising(RuntimeError), ["a"]):
        guard.forget(agent)
    guard.close()


async def test_aforgetting_an_agent_that_cannot_be_keyed_does_nothing(store_kind: Store) -> None:
    guard = guard_on(*store_kind, OK_ONLY)
    for agent in (slots_hash_raising(RuntimeError), getattr_raising(RuntimeError), ["a"]):
        await guard.aforget(agent)
    await guard.aclose()


class StoreRaising:
    """A host's own store that raises what no guard code expects: the last-resort net."""

    url = "custom://"

    def decide(self, agent: Any, call: Any) -> Any:
        raise RuntimeError("hostile s3cret")

    async def adecide(self, agent: Any, call: Any) -> Any:
        raise RuntimeError("hostile s3cret")

    def record_result(self, agent: Any, call: Any, result: Any) -> bool:
        raise RuntimeError("hostile s3cret")

    def agent_count(self) -> int:
        return 0

    def close(self) -> None:
        pass


def test_anything_else_that_raises_fails_open_as_error_with_one_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    guard = Guard(store=StoreRaising())
    with caplog.at_level(logging.WARNING, logger="loopfuse"):
        assert every_entry_point(guard, "read", {"p": 1}, "a") == [True, True]
    assert guard.stats()["fail_open"] == {"error": 3}
    assert [r.getMessage() for r in caplog.records] == [
        "loopfuse: a call could not be judged (RuntimeError); allowing"
    ]


def test_made_up_long_tool_names_are_not_kept_once_their_agents_are_forgotten() -> None:
    guard = Guard()
    guard.check("warm", {}, "w")
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for i in range(40):
            guard.check(f"{i:06d}" + "x" * 100_000, {"q": 1}, f"run-{i}")  # a 100 KB name, once
            guard.forget(f"run-{i}")
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert held < 1_000_000  # was 8 MB: every name and its UTF-8 bytes, in two caches


def test_deeply_nested_arguments_with_a_volatile_key_have_no_near_key_and_never_fail(
    store_kind: Store,
) -> None:
    guard = guard_on(*store_kind, {"circuit_breaker": {"duplicate_limit": 3}})
    args: Any = {"cursor": "abc"}
    for _ in range(500):  # deeper than masking the cursor can recurse
        args = [args]
    guard.check("warm", {}, "a")
    guard.record_result("warm", {}, "ok", agent="a")
    allowed = []
    for _ in range(6):
        allowed.append(guard.check("fetch", {"q": args}, "a").allowed)
        guard.record_result("fetch", {"q": args}, "same page", agent="a")
    assert allowed == [True] * 4 + [False] * 2  # the exact repeat is still caught (duplicate 4/4)
    assert guard.stats()["fail_open"] == {}
