"""The failures breaker through the guard, on both stores: call after call failing."""

from __future__ import annotations

import pytest

from loopfuse import ConfigError, Guard
from tests.store_fixtures import GuardFactory

from .conftest import run

ONLY = {"stall": {"enabled": False}, "same_error": {"enabled": False}}


APPS = [
    "admin",
    "auth",
    "blog",
    "cache",
    "core",
    "files",
    "forms",
    "gis",
    "mail",
    "news",
    "pages",
    "polls",
    "sites",
    "tags",
    "users",
    "views",
    "wiki",
]


def fail(guard: Guard, n: int) -> bool:
    """The same class looked for in one app after another (names, not numbers: each error its own)."""
    path = f"tests/{APPS[n % len(APPS)]}{'_x' * (n // len(APPS))}/models.py"
    args = {"class_name": "Capability", "file_name": path}
    return run(
        guard, "search_class_in_file", args, f"Could not find class Capability in file {path}", ok=False
    )


def test_the_call_after_15_failures_in_a_row_is_denied(make_guard: GuardFactory) -> None:
    guard = make_guard()
    assert all(fail(guard, n) for n in range(15))
    decision = guard.check("search_code", {"code_str": "class Capability"}, "a")
    assert (decision.allowed, decision.kind, decision.count, decision.limit) == (False, "failures", 15, 15)
    assert decision.rule == "failures.limit"
    assert "failures limit 15" in (decision.message or "")
    assert "Capability" not in (decision.message or "")


def test_any_success_or_unknown_outcome_starts_the_count_again(make_guard: GuardFactory) -> None:
    guard = make_guard({"failures": {"limit": 4}, **ONLY})
    for n in range(12):
        if n % 4 == 3:
            assert run(guard, "read", {"path": f"f{n}"}, "text", ok=None if n % 8 == 3 else True)
        else:
            assert fail(guard, n)
    assert all(fail(guard, n) for n in range(20, 23))


def test_one_trial_call_runs_after_each_refusal(make_guard: GuardFactory) -> None:
    guard = make_guard({"failures": {"limit": 3}, **ONLY})
    assert all(fail(guard, n) for n in range(3))
    assert not fail(guard, 3)
    assert fail(guard, 4)  # the trial fails too
    assert not fail(guard, 5)
    assert run(guard, "read", {"path": "README"}, "text", ok=True)  # the trial succeeds
    assert all(fail(guard, n) for n in range(6, 9))


def test_after_two_failed_trials_every_call_is_refused_and_the_run_stops(make_guard: GuardFactory) -> None:
    guard = make_guard({"failures": {"limit": 3}, **ONLY})
    assert all(fail(guard, n) for n in range(3))
    allowed = [fail(guard, n) for n in range(3, 10)]
    assert allowed == [False, True, False, True, False, False, False]
    decision = guard.check("read", {"path": "README"}, "a")
    assert (decision.kind, decision.count, decision.escalate) == ("failures", 5, True)


def test_trials_0_refuses_every_call_after_the_limit(make_guard: GuardFactory) -> None:
    guard = make_guard({"failures": {"limit": 3, "trials": 0}, **ONLY})
    assert all(fail(guard, n) for n in range(3))
    decisions = [guard.check("read", {"path": f"f{n}"}, "a") for n in range(3)]
    assert [(d.allowed, d.escalate) for d in decisions] == [(False, False), (False, False), (False, True)]


def test_a_denied_call_never_counts(make_guard: GuardFactory) -> None:
    guard = make_guard({"failures": {"limit": 3}, **ONLY})
    assert all(fail(guard, n) for n in range(3))
    assert not fail(guard, 3)
    assert fail(guard, 4)
    assert guard.check("read", {"path": "x"}, "a").count == 4


def test_it_can_be_turned_off(make_guard: GuardFactory) -> None:
    guard = make_guard({"failures": {"enabled": False}, **ONLY})
    assert all(fail(guard, n) for n in range(40))


@pytest.mark.parametrize(
    ("body", "allowed"),
    [
        ({"limit": 0}, "an integer >= 1"),
        ({"limit": "5"}, "an integer >= 1"),
        ({"enabled": 1}, "true or false"),
        ({"trials": -1}, "an integer >= 0"),
    ],
)
def test_bad_settings_are_named_at_construction(body: dict[str, object], allowed: str) -> None:
    with pytest.raises(ConfigError) as raised:
        Guard.from_config({"failures": body})
    text = str(raised.value)
    assert "failures" in text and next(iter(body)) in text and allowed in text
