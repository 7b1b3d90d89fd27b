"""Each new breaker alone, with explicit timelines of calls and results, on both stores."""

from __future__ import annotations

from tests.store_fixtures import GuardFactory

from .conftest import Alone, run


def test_cycle_of_two_denied_after_three_repetitions(alone: Alone) -> None:
    guard = alone("cycle", {"only_with_results": False})
    timeline = ["A", "B", "A", "B", "A", "B", "A"]
    allowed = [run(guard, t, {}) for t in timeline]
    assert allowed == [True] * 6 + [False]
    decision = guard.check("A", {}, "a")
    assert (decision.kind, decision.count, decision.limit) == ("cycle", 3, 3)
    assert run(guard, "C", {})


def test_cycle_of_three_and_a_different_call_breaks_it(alone: Alone) -> None:
    guard = alone("cycle", {"only_with_results": False})
    for _ in range(3):
        for tool in ("goto", "search", "open"):
            assert run(guard, tool, {})
    assert not run(guard, "goto", {})
    assert run(guard, "edit", {})
    assert run(guard, "goto", {})


def test_cycle_with_new_results_is_progress(alone: Alone) -> None:
    guard = alone("cycle", {})
    for i in range(10):
        assert run(guard, "scroll_down", {}, f"down {i}")
        assert run(guard, "scroll_up", {}, f"up {i}")


def test_cycle_with_identical_results_is_denied_only_with_results_by_default(alone: Alone) -> None:
    guard = alone("cycle", {})
    assert all(run(guard, t, {}) for t in "ABABABAB")
    guard = alone("cycle", {})
    allowed = [run(guard, t, {}, f"same {t}") for t in "ABABABA"]
    assert allowed == [True] * 6 + [False]


def test_repeated_identical_call_is_not_a_cycle(alone: Alone) -> None:
    guard = alone("cycle", {"only_with_results": False})
    assert all(run(guard, "A", {}) for _ in range(20))


def test_cycle_longer_than_max_period_is_not_seen(alone: Alone) -> None:
    guard = alone("cycle", {"only_with_results": False, "max_period": 2})
    assert all(run(guard, t, {}) for t in "ABCABCABCABC")


def test_near_duplicate_masks_numbers_and_volatile_keys(alone: Alone) -> None:
    guard = alone("near_duplicate", {"limit": 3, "only_with_results": False})
    calls = [
        {"query": "status of job 17", "cursor": "a"},
        {"query": "status of job 18", "cursor": "b"},
        {"query": "status of job 19", "cursor": "c"},
    ]
    assert all(run(guard, "api", c) for c in calls)
    decision = guard.check("api", {"query": "status of job 20", "cursor": "d"}, "a")
    assert (decision.allowed, decision.kind, decision.count) == (False, "near_duplicate", 3)
    assert run(guard, "api", {"query": "list jobs"})


def test_near_duplicate_masks_uuids_timestamps_hex(alone: Alone) -> None:
    guard = alone("near_duplicate", {"limit": 2, "only_with_results": False, "masks": ["uuids"]})
    assert run(guard, "get", {"ref": "123e4567-e89b-12d3-a456-426614174000"})
    assert run(guard, "get", {"ref": "00000000-0000-0000-0000-000000000000"})
    assert not run(guard, "get", {"ref": "ffffffff-0000-0000-0000-000000000000"})
    assert run(guard, "get", {"ref": 7})


def test_near_duplicate_counts_only_same_results(alone: Alone) -> None:
    guard = alone("near_duplicate", {"limit": 2})
    for line in range(10):
        assert run(guard, "goto", {"line": line}, f"screen at {line}")
    assert run(guard, "goto", {"line": 100}, "error: line out of range")
    assert run(guard, "goto", {"line": 101}, "error: line out of range")
    assert not run(guard, "goto", {"line": 102})


def test_same_error_whatever_the_arguments(alone: Alone) -> None:
    guard = alone("same_error", {"limit": 3, "identical_limit": 0})
    for i in range(3):
        assert run(guard, "edit", {"text": f"try {i}"}, "SyntaxError at line 4", ok=False)
    decision = guard.check("edit", {"text": "try 4"}, "a")
    assert (decision.allowed, decision.kind, decision.count, decision.limit) == (False, "same_error", 3, 3)
    assert run(guard, "open", {"path": "x.py"}, "file contents")
    assert run(guard, "edit", {"text": "try 5"}, "ok")


def test_same_error_different_errors_do_not_add_up(alone: Alone) -> None:
    guard = alone("same_error", {"limit": 2, "identical_limit": 0})
    for err in ("NameError", "TypeError", "KeyError", "IndexError"):
        assert run(guard, "bash", {"c": err}, f"{err}: boom", ok=False)


def test_same_error_identical_call_limit(alone: Alone) -> None:
    guard = alone("same_error", {"limit": 100, "identical_limit": 2})
    assert run(guard, "edit", {"t": "x"}, "E999 bad indent", ok=False)
    assert run(guard, "edit", {"t": "x"}, "E999 bad indent", ok=False)
    assert not run(guard, "edit", {"t": "x"})
    assert run(guard, "edit", {"t": "y"}, "E999 bad indent", ok=False)


def test_same_error_needs_ok_false(alone: Alone) -> None:
    guard = alone("same_error", {"limit": 1})
    assert all(run(guard, "bash", {"i": i}, "boom") for i in range(5))


def test_per_tool_rules_exempt_identity_and_limits(make_guard: GuardFactory) -> None:
    guard = make_guard(
        {
            "tools": {
                "poll": {"exempt": True},
                "search": {"identity_args": ["query"]},
                "bash": {"duplicate_limit": 2},
            }
        }
    )
    assert all(guard.check("poll", {}, "a") for _ in range(50))
    for i in range(6):
        assert guard.check("search", {"query": "q", "request_id": i}, "a")
    assert not guard.check("search", {"query": "q", "request_id": 99}, "a")
    assert [guard.check("bash", {"c": "ls"}, "a").allowed for _ in range(3)] == [True, True, False]


def test_shadow_mode_allows_and_marks_would_be_denials(make_guard: GuardFactory) -> None:
    guard = make_guard({"guard": {"mode": "shadow", "abort_after_denials": 1}})
    decisions = [guard.check("bash", {"c": "ls"}, "a") for _ in range(9)]
    assert all(d.allowed for d in decisions)
    assert [d.shadow for d in decisions] == [False] * 6 + [True] * 3
    assert decisions[6].kind == "duplicate" and decisions[6].message
    assert not any(d.escalate for d in decisions)
