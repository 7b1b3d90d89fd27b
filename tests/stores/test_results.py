"""Reported results on every store: the same timelines in process and in a real redis-server."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from loopfuse import Guard
from tests.store_fixtures import GuardFactory, RedisServer, unique_prefix


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
        # (ok not given: a success after a call new to the agent would be a re-run after news)
        assert run(guard, "read", {"p": 1}, "x", ok=None) and run(guard, "read", {"p": 2}, "y", ok=None)
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


def test_a_denial_ends_the_wait_for_an_earlier_unreported_result(make_guard: GuardFactory) -> None:
    guard = make_guard({"circuit_breaker": {"duplicate_limit": 3, "result_limit": 3}})
    assert guard.check("read", {"p": 1}, "a").allowed  # its result is never reported
    assert run(guard, "read", {"p": 1}, "r1")
    assert guard.check("read", {"p": 1}, "a").allowed  # nor this one's
    denied = guard.check("read", {"p": 1}, "a")
    assert (denied.allowed, denied.kind) == (False, "duplicate")
    guard.record_result("read", {"p": 1}, denied.message, "a", ok=False)  # the step's text
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


def test_near_duplicates_returning_the_same_result_are_denied(make_guard: GuardFactory) -> None:
    guard = make_guard({"near_duplicate": {"limit": 3}})
    # The agent's first call precedes its first result, so near_duplicate does not count it.
    assert [run(guard, "goto", {"line": i}, "the same screen") for i in range(4)] == [True] * 4
    assert outcome(guard, "goto", {"line": 99}) == (False, "near_duplicate", 3, 3)
    assert outcome(guard, "goto", {"file": "b.py"}) == (True, None, 0, 0)  # another shape of call
    pages = [run(guard, "goto", {"line": i}, f"screen {i}", agent="b") for i in range(12)]
    assert pages == [True] * 12  # new screens are progress


def test_near_duplicates_without_results_do_not_count(make_guard: GuardFactory) -> None:
    guard = make_guard({"near_duplicate": {"limit": 2}})
    assert run(guard, "search", {"q": "job 1"}, "no match")
    assert [guard.check("search", {"q": f"job {i}"}, "a").allowed for i in range(2, 12)] == [True] * 10


def test_results_of_parallel_calls_rekey_their_near_duplicate_entries(make_guard: GuardFactory) -> None:
    guard = make_guard({"near_duplicate": {"limit": 2}})
    assert run(guard, "list", {}, "a.py b.py")
    turn = [("search", {"q": "job 1"}), ("read", {"p": "a.py"}), ("read", {"p": "b.py"}), ("stat", {})]
    assert all(guard.check(tool, args, "a") for tool, args in turn)  # one turn, results after
    for tool, args in turn:
        guard.record_result(tool, args, "no match" if tool == "search" else "text", "a")
    assert run(guard, "search", {"q": "job 2"}, "no match")
    assert outcome(guard, "search", {"q": "job 3"}) == (False, "near_duplicate", 2, 2)


def test_cycle_with_the_same_results_is_denied(make_guard: GuardFactory) -> None:
    guard = make_guard()  # cycle: max_period 4, min_repeats 3, only with results
    steps = [run(guard, tool, {}, f"{tool} output") for tool in ["open", "close"] * 3]
    assert steps == [True] * 6
    assert outcome(guard, "open", {}) == (False, "cycle", 3, 3)
    assert outcome(guard, "edit", {}) == (True, None, 0, 0)
    progress = [run(guard, tool, {}, f"{tool} {i}", agent="b") for i in range(6) for tool in ("up", "down")]
    assert progress == [True] * 12  # new results each time


def test_cycle_is_judged_once_its_calls_have_results(make_guard: GuardFactory) -> None:
    guard = make_guard()
    assert all(guard.check(tool, {}, "a") for tool in ["A", "B", "C"] * 3)  # no results yet
    # Calls are tracked from the agent's first result on: the repetitions before it do not count.
    for tool in ["A", "B", "C"] * 3:
        assert run(guard, tool, {}, "same")
    assert outcome(guard, "A", {}) == (False, "cycle", 3, 3)  # A,B,C three times with results


def test_default_redis_guard_denies_cycles_and_near_duplicates(redis_server: RedisServer) -> None:
    guard = Guard.from_config({"store": {"url": redis_server.url, "prefix": unique_prefix()}})
    assert [run(guard, tool, {}, "same") for tool in ["open", "close"] * 3] == [True] * 6
    assert outcome(guard, "open", {}) == (False, "cycle", 3, 3)
    assert all(run(guard, "goto", {"line": i}, "same", agent="b") for i in range(9))
    assert outcome(guard, "goto", {"line": 99}, "b") == (False, "near_duplicate", 8, 8)
    guard.close()


def test_a_guard_that_never_gets_results_still_sees_near_duplicates(redis_server: RedisServer) -> None:
    store = {"url": redis_server.url, "prefix": unique_prefix()}
    config = {"near_duplicate": {"limit": 2}, "store": store}
    reporting, checking = Guard.from_config(config), Guard.from_config(config)
    for line in range(3):  # the first call precedes the first result: two count
        assert run(reporting, "goto", {"line": line}, "the same screen")
    reporting.flush()  # the last result would travel with reporting's next check
    assert outcome(checking, "goto", {"line": 50}) == (False, "near_duplicate", 2, 2)
    reporting.close()
    checking.close()


async def test_async_checks_without_results_still_see_near_duplicates(redis_server: RedisServer) -> None:
    store = {"url": redis_server.url, "prefix": unique_prefix()}
    config = {"near_duplicate": {"limit": 2}, "store": store}
    reporting, checking = Guard.from_config(config), Guard.from_config(config)
    for line in range(3):
        assert run(reporting, "goto", {"line": line}, "the same screen")
    await reporting.aflush()
    denied = await checking.acheck("goto", {"line": 50}, "a")
    assert (denied.allowed, denied.kind, denied.count, denied.limit) == (False, "near_duplicate", 2, 2)
    await reporting.aclose()  # aflush opened asyncio connections on this loop
    await checking.aclose()


def test_results_table_stays_bounded(redis_server: RedisServer) -> None:
    prefix = unique_prefix()
    store = {"url": redis_server.url, "prefix": prefix}
    config = {"circuit_breaker": {"window": 10}, "near_duplicate": {"limit": 2, "window": 4}, "store": store}
    guard = Guard.from_config(config)
    for i in range(60):  # distinct calls, and distinct near-duplicate keys (the tool's name)
        run(guard, f"read{i}", {"p": i}, f"content {i}")
    client = redis_server.client()
    state = client.hgetall(f"{prefix}{{a}}:s")
    lengths = {field.decode(): len(value) for field, value in state.items()}
    assert lengths["w"] == 10 * 8 and lengths["lr"] == 10 * 16  # the window, the latest results
    assert lengths["nw"] == 4 * 8 and lengths["nl"] == 4 * 16  # near_duplicate's
    assert lengths["st:p"] == 32 * 34 and "st:s" not in lengths and "st:l" not in lengths  # stall's
    assert sum(lengths.values()) < 2_500
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
        assert guard.stats()["fail_open"] == {}  # held back for the next check
        guard.flush()
    assert guard.stats()["fail_open"]["store"] == 4  # the first result was held back too
    assert sum("results are ignored" in r.getMessage() for r in caplog.records) == 1
    guard.close()


def test_a_result_for_an_agent_redis_cannot_key_is_ignored(redis_server: RedisServer) -> None:
    guard = Guard.from_config({"store": {"url": redis_server.url, "prefix": unique_prefix()}})
    guard.record_result("read", {"p": 1}, "content", agent=object())  # an object without a name
    assert guard.stats()["fail_open"]["result"] == 1
    guard.close()


def test_calls_run_side_by_side_from_the_first_turn_have_their_results_counted(
    make_guard: GuardFactory,
) -> None:
    guard = make_guard()  # each turn checks both calls, then reports both results in order
    for i in range(10):
        turn = [("search", {"q": f"query {i}"}, f"hits {i}"), ("read", {"path": "log.txt"}, f"line {i}")]
        assert all(guard.check(tool, args, "a").allowed for tool, args, _ in turn), i
        for tool, args, result in turn:
            guard.record_result(tool, args, result, "a", ok=True)
