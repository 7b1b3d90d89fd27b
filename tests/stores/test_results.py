"""Reported results on every store: the same timelines in process and in a real redis-server."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from loopfuse import Guard

from .conftest import GuardFactory, RedisServer, unique_prefix


def outcome(guard: Guard, tool: str, args: Any, agent: str = "a") -> tuple[bool, str | None, int, int]:
    d = guard.check(tool, args, agent)
    return d.allowed, d.kind, d.count, d.limit


def run(guard: Guard, tool: str, args: Any, result: Any, ok: bool | None = True, agent: str = "a") -> bool:
    """Check the call and, if allowed, report ``result``; whether it was allowed."""
    allowed = guard.check(tool, args, agent).allowed
    if allowed:
        guard.record_result(tool, args, result, agent, ok=ok)
    return allowed


def test_paging_with_new_output_passes_the_duplicate_limit(make_guard: GuardFactory) -> None:
    guard = make_guard()  # defaults: duplicate_limit 6, progress_limit 8
    pages = [run(guard, "scroll_down", {}, f"lines {100 * i}-{100 * i + 99}") for i in range(8)]
    assert pages == [True] * 8
    assert outcome(guard, "scroll_down", {}) == (False, "duplicate", 8, 8)


def test_same_result_in_a_row_is_denied_at_same_result_limit(make_guard: GuardFactory) -> None:
    guard = make_guard()  # same_result_limit 5
    assert [run(guard, "goto", {"line": 72}, "the same screen") for _ in range(5)] == [True] * 5
    assert outcome(guard, "goto", {"line": 72}) == (False, "duplicate", 5, 5)


def test_known_result_raises_the_window_limit_to_result_limit(make_guard: GuardFactory) -> None:
    guard = make_guard({"circuit_breaker": {"duplicate_limit": 2, "same_result_limit": 0}})
    for _ in range(3):  # without results the third would be denied (2/2); result_limit is 3
        assert run(guard, "read", {"p": 1}, "x") and run(guard, "read", {"p": 2}, "y")
    assert outcome(guard, "read", {"p": 1}) == (False, "duplicate", 3, 3)


def test_entries_without_results_keep_counting(make_guard: GuardFactory) -> None:
    guard = make_guard({"circuit_breaker": {"duplicate_limit": 3, "result_limit": 0}})
    assert run(guard, "read", {"p": 1}, "first")
    assert [guard.check("read", {"p": 1}, "a").allowed for _ in range(3)] == [True, True, False]


def test_results_of_denied_or_already_reported_calls_are_ignored(make_guard: GuardFactory) -> None:
    guard = make_guard({"circuit_breaker": {"duplicate_limit": 2, "progress_limit": 0}})
    assert [run(guard, "read", {"p": 1}, "a") for _ in range(3)] == [True] * 3
    assert outcome(guard, "read", {"p": 1}) == (False, "duplicate", 3, 3)
    for text in ("b", "c", "d"):  # reported for the denied call, or a second time: no effect
        guard.record_result("read", {"p": 1}, text, "a")
    assert outcome(guard, "read", {"p": 1}) == (False, "duplicate", 3, 3)


def test_loop_brake_restarts_on_a_new_result(make_guard: GuardFactory) -> None:
    brake = {"circuit_breaker": {"enabled": False}, "loop_brake": {"max_repeats": 2, "result_aware": True}}
    guard = make_guard(brake)
    assert [run(guard, "poll", {}, f"state {i}") for i in range(6)] == [True] * 6
    assert [run(guard, "poll", {}, "state 5") for _ in range(2)] == [True, False]
    assert outcome(guard, "poll", {}) == (False, "repeat", 4, 2)


def test_same_error_identical_call(make_guard: GuardFactory) -> None:
    guard = make_guard()  # identical_limit 4
    edit = {"path": "a.py", "text": "def f(:"}
    assert [run(guard, "edit", edit, "SyntaxError at line 3", ok=False) for _ in range(4)] == [True] * 4
    assert outcome(guard, "edit", edit) == (False, "same_error", 4, 4)
    assert outcome(guard, "read", {"path": "a.py"}) == (True, None, 0, 0)  # another tool is fine


def test_same_error_whatever_the_arguments_until_a_success(make_guard: GuardFactory) -> None:
    guard = make_guard({"same_error": {"limit": 3}})
    assert [run(guard, "edit", {"n": i}, f"SyntaxError at line {i}", ok=False) for i in range(3)] == [
        True
    ] * 3
    assert outcome(guard, "edit", {"n": 9}) == (False, "same_error", 3, 3)
    for i in range(2):
        run(guard, "edit", {"n": i}, "SyntaxError", ok=False, agent="b")
    run(guard, "edit", {"n": 5}, "ok", ok=True, agent="b")  # a success ends the run of errors
    assert run(guard, "edit", {"n": 6}, "SyntaxError", ok=False, agent="b")
    assert outcome(guard, "edit", {"n": 7}, "b") == (True, None, 0, 0)


def test_per_tool_duplicate_limit(make_guard: GuardFactory) -> None:
    guard = make_guard({"tools": {"search": {"duplicate_limit": 2}}})
    assert [run(guard, "search", {"q": "x"}, "one hit") for _ in range(2)] == [True, True]
    assert outcome(guard, "search", {"q": "x"}) == (False, "duplicate", 2, 2)


def test_results_table_stays_bounded(redis_server: RedisServer) -> None:
    prefix = unique_prefix()
    store = {"url": redis_server.url, "prefix": prefix}
    guard = Guard.from_config({"circuit_breaker": {"window": 10}, "store": store})
    for i in range(60):
        run(guard, "read", {"p": i}, f"content {i}")
    client = redis_server.client()
    assert client.hlen(f"{prefix}{{a}}:r") == 10
    assert client.strlen(f"{prefix}{{a}}:o") == 80
    guard.forget("a")
    assert client.keys(f"{prefix}*") == []
    guard.close()


def test_a_redis_failure_while_reporting_never_reaches_the_host(
    own_redis: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    guard = Guard.from_config({"store": {"url": own_redis.url, "prefix": unique_prefix(), "timeout": 0.2}})
    assert run(guard, "read", {"p": 1}, "content")
    own_redis.stop()
    with caplog.at_level(logging.WARNING, logger="loopfuse"):
        for _ in range(3):
            guard.record_result("read", {"p": 1}, "content", "a")
    assert guard.stats()["fail_open"]["store"] == 3
    assert sum("results are ignored" in r.getMessage() for r in caplog.records) == 1
    guard.close()


def test_a_result_for_an_agent_redis_cannot_key_is_ignored(redis_server: RedisServer) -> None:
    guard = Guard.from_config({"store": {"url": redis_server.url, "prefix": unique_prefix()}})
    guard.record_result("read", {"p": 1}, "content", agent=42)  # check would raise ConfigError
    assert guard.stats()["fail_open"]["result"] == 1
    guard.close()
