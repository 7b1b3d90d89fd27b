"""The stall breaker through the guard, on both stores: repeats with nothing new between."""

from __future__ import annotations

from tests.store_fixtures import GuardFactory

from .conftest import run

EDIT = {"command": "edit 264:265\n    with open(filename, mode=mode) as f:"}
ERROR = "E999 IndentationError: unexpected indent at line 264 (attempt {n})"


def test_identical_failures_with_a_no_op_between_are_denied(make_guard: GuardFactory) -> None:
    """The window and cycle let this pass; stall does not (same_error, off here, sees through the
    thoughts too). A thought is never something new: the first one started the count again, and
    the 8th call was refused."""
    guard = make_guard({"same_error": {"enabled": False}})
    steps = ["edit", "think", "edit", "edit", "think", "edit"]
    for n, tool in enumerate(steps):
        if tool == "think":
            assert run(guard, "think", {"thought": "hmm"}, "Your thought has been logged.")
        else:
            assert run(guard, "edit", EDIT, ERROR.format(n=n), ok=False)
    decision = guard.check("edit", EDIT, "a")
    assert (decision.allowed, decision.kind, decision.count, decision.limit) == (False, "stall", 4, 4)
    assert decision.rule == "stall.error_limit"
    assert "stall error_limit 4" in (decision.message or "")
    assert "264" not in (decision.message or "")


def test_identical_failures_with_trivial_variants_between_are_denied(make_guard: GuardFactory) -> None:
    guard = make_guard({"stall": {"tool_error_limit": 0}})  # the tool's own count would deny first
    for n in range(3):
        assert run(guard, "edit", EDIT, ERROR.format(n=n), ok=False)
        variant = {"command": EDIT["command"] + " " * (n + 1)}
        assert run(guard, "edit", variant, ERROR.format(n=n + 50), ok=False)
    assert run(guard, "edit", EDIT, ERROR.format(n=9), ok=False)
    decision = guard.check("edit", EDIT, "a")
    assert (decision.kind, decision.rule) == ("stall", "stall.error_limit")


def test_a_failing_reproduction_rerun_after_each_new_edit_is_never_stalled(make_guard: GuardFactory) -> None:
    """Each edit brings something new, so stall never counts past 1; what ends this run is
    the window's progress-blind backstop, the 8th identical outcome among the last 200 calls."""
    guard = make_guard({"stall": {"limit": 2, "error_limit": 2}})
    for i in range(7):
        assert run(guard, "edit", {"line": i}, f"[File: a.py] line {i} now reads fix-{'x' * i}")
        assert run(guard, "bash", {"command": "python reproduce.py"}, "AssertionError", ok=False)
    assert run(guard, "edit", {"line": 7}, "[File: a.py] line 7 now reads fix-7")
    decision = guard.check("bash", {"command": "python reproduce.py"}, "a")
    assert (decision.kind, decision.rule) == ("duplicate", "circuit_breaker.result_limit")


def test_a_denied_attempt_never_counts(make_guard: GuardFactory) -> None:
    guard = make_guard({"stall": {"error_limit": 2}, "same_error": {"enabled": False}})
    for n in range(2):
        assert run(guard, "edit", EDIT, ERROR.format(n=n), ok=False)
    for _ in range(3):
        assert not run(guard, "edit", EDIT, ERROR.format(n=7), ok=False)
    assert guard.check("edit", EDIT, "a").count == 2


def test_the_call_after_a_fourth_identical_failure_is_refused_whatever(make_guard: GuardFactory) -> None:
    """The agent's next move after a stalled failure is most often a trivial variant of it."""
    guard = make_guard()
    for n in range(4):
        assert run(guard, "edit", EDIT, ERROR.format(n=n), ok=False)
    variant = {"command": EDIT["command"].replace("264:265", "263:265")}
    decision = guard.check("edit", variant, "a")
    assert (decision.allowed, decision.kind, decision.count, decision.limit) == (False, "stall", 4, 4)
    assert decision.rule == "stall.after_error_limit"
    assert "stall error_limit 4" in (decision.message or "") and "263" not in (decision.message or "")
    assert not run(guard, "edit", EDIT, ERROR.format(n=9), ok=False)  # the identical call: its own rule
    assert run(guard, "open", {"path": "a.py"}, "[File: a.py (40 lines)]")  # judged as usual again


def test_three_identical_failures_then_a_variant_are_all_allowed(make_guard: GuardFactory) -> None:
    guard = make_guard()
    for n in range(3):
        assert run(guard, "edit", EDIT, ERROR.format(n=n), ok=False)
    assert run(guard, "edit", {"command": EDIT["command"] + "  "}, "[File: a.py] edited", ok=True)


LOOKUP_ERROR = "Could not find class Capability in the codebase."
THOUGHT = "Your thought has been logged."
APPS = (
    "auth",
    "admin",
    "billing",
    "cache",
    "core",
    "forms",
    "mail",
    "media",
    "orders",
    "search",
    "shop",
    "users",
)


def test_a_tool_failing_the_same_way_whatever_its_arguments_is_denied(make_guard: GuardFactory) -> None:
    """The same class looked up in one file after another: the answer never changes. A no-op
    every 4 look-ups (nothing new) ends neither this count nor same_error's run in a row (off
    here: it would refuse the 11th look-up first)."""
    guard = make_guard({"same_error": {"enabled": False}})  # the default tool_error_limit, 12
    assert run(guard, "think", {"thought": "where is it?"}, THOUGHT)  # new the first time
    for n, app in enumerate(APPS, start=1):
        args = {"class_name": "Capability", "file_name": f"tests/{app}/models.py"}
        assert run(guard, "search_class_in_file", args, LOOKUP_ERROR, ok=False)
        if n % 4 == 0:
            assert run(guard, "think", {"thought": "where is it?"}, THOUGHT)
    decision = guard.check("search_class_in_file", {"class_name": "Capability", "file_name": "b.py"}, "a")
    assert (decision.allowed, decision.kind, decision.count, decision.limit) == (False, "stall", 12, 12)
    assert decision.rule == "stall.tool_error_limit"
    assert "stall tool_error_limit 12" in (decision.message or "") and "Capability" not in (
        decision.message or ""
    )
    assert run(guard, "search_code", {"code_str": "Capability"}, "Found 2 snippets")  # other tools run


def test_a_new_result_between_failures_of_a_tool_starts_its_count_again(make_guard: GuardFactory) -> None:
    guard = make_guard({"stall": {"tool_error_limit": 5}})
    for n, app in enumerate(APPS[:8]):  # names without numbers: each call its own near key
        args = {"class_name": "Capability", "file_name": f"tests/{app}/models.py"}
        assert run(guard, "search_class_in_file", args, LOOKUP_ERROR, ok=False)
        if n % 4 == 3:
            assert run(guard, "search_code", {"code_str": f"Cap{n}"}, f"Found {n} snippets in file{n}.py")


def test_a_batch_tool_counts_its_identical_calls_only(make_guard: GuardFactory) -> None:
    guard = make_guard({"tools": {"fetch": {"batch": True}}, "stall": {"tool_error_limit": 5}})
    for n in range(8):
        assert run(guard, "fetch", {"id": f"item-{n}"}, "not available", ok=False)


RANGES = ("264:265", "263:265", "264:266", "265:265")


def test_calls_equal_but_for_their_numbers_failing_identically_are_denied(make_guard: GuardFactory) -> None:
    """The same edit sent at one line range after another, each rejected with the same text."""
    guard = make_guard()
    for lines in RANGES:
        edit = {"command": f"edit {lines}\n    with open(filename, mode=mode) as f:"}
        assert run(guard, "edit", edit, "E999 IndentationError: unexpected indent", ok=False)
    decision = guard.check("edit", {"command": "edit 262:265\n    with open(filename, mode=mode) as f:"}, "a")
    assert (decision.allowed, decision.kind, decision.count, decision.limit) == (False, "stall", 4, 4)
    assert decision.rule == "stall.similar_error_limit"
    assert "stall error_limit 4" in (decision.message or "") and "262" not in (decision.message or "")


def test_a_fresh_request_id_in_every_call_does_not_hide_a_repeated_failure(make_guard: GuardFactory) -> None:
    """The first search is new, so the count starts after it: the 5th failure is the 4th with
    nothing new in between, and the agent's next call, then the same change, are refused."""
    guard = make_guard()
    for n in range(5):
        args = {
            "flight": "HAT170",
            "date": "2024-05-22",
            "request_id": f"{n:08x}-0b7d-4c1e-9a55-3e2f6d8b7c01",
        }
        assert run(guard, "update_flight", args, "Error: flight not available", ok=False)
        if n < 4:
            assert run(guard, "search_flights", {"date": "2024-05-22"}, "HAT170 (full), HAT022 (full)")
    search = guard.check("search_flights", {"date": "2024-05-22"}, "a")
    assert (search.allowed, search.rule) == (False, "stall.after_error_limit")
    args = {"flight": "HAT170", "date": "2024-05-22", "request_id": "5e4d3c2b-1a09-4f8e-8d7c-6b5a49382716"}
    decision = guard.check("update_flight", args, "a")
    assert (decision.allowed, decision.rule, decision.count) == (False, "stall.similar_error_limit", 4)


def test_failures_that_name_their_item_stay_apart(make_guard: GuardFactory) -> None:
    """Looking up one order after another is not a repeat: each answer is about its own item."""
    guard = make_guard()
    for order in range(1001, 1011):
        assert run(guard, "get_order", {"order_id": order}, f"Error: order {order} not found", ok=False)
    assert run(guard, "list_orders", {}, "1011, 1012")
