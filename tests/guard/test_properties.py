"""Hypothesis properties of the core breakers in a Guard, against a naive reference model of the issue's rules.

The tables the breakers count in: tests/breakers/test_state_tables.py."""

from __future__ import annotations

import json
import random
from collections import deque
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from loopfuse import Guard

TOOLS = st.sampled_from(["search", "read", "bash"])
ARGS = st.dictionaries(st.sampled_from(["q", "path", "n", "description"]), st.integers(0, 2), max_size=3)
CALLS = st.lists(st.tuples(TOOLS, ARGS), max_size=120)
LIMITS = st.tuples(st.integers(1, 4), st.integers(4, 12), st.integers(0, 40), st.integers(1, 4))


class ReferenceGuard:
    """The rules as written, with full rescans: cap, then duplicate, then repeat."""

    def __init__(self, limit: int, window: int, cap: int, repeats: int) -> None:
        self.limit, self.cap, self.repeats = limit, cap, repeats
        self.window: deque[Any] = deque(maxlen=window)
        self.calls, self.streak = 0, 0
        self.last: Any = None

    def check(self, tool: str, args: dict[str, int]) -> str:
        kept = {k: v for k, v in args.items() if k != "description"} or args  # all ignored: kept
        key = (tool, tuple(sorted(kept.items())))
        full = (tool, tuple(sorted(args.items())))
        if self.cap and self.calls >= self.cap:
            return "cap"
        if list(self.window).count(key) >= self.limit:
            return "duplicate"
        if full == self.last and self.streak >= self.repeats:
            return "repeat"
        self.calls += 1
        self.window.append(key)
        self.streak = self.streak + 1 if full == self.last else 1
        self.last = full
        return "ok"


def make_guard(limits: tuple[int, int, int, int]) -> Guard:
    limit, window, cap, repeats = limits
    return Guard.from_config(
        {
            "circuit_breaker": {"duplicate_limit": limit, "window": window, "max_calls_per_agent": cap},
            "loop_brake": {"max_repeats": repeats},
            "guard": {"abort_after_denials": 0},
        }
    )


@settings(max_examples=200, deadline=None)
@given(CALLS, LIMITS)
def test_guard_decides_exactly_as_the_reference_model(
    calls: list[tuple[str, dict[str, int]]], limits: Any
) -> None:
    guard, reference = make_guard(limits), ReferenceGuard(*limits)
    for tool, args in calls:
        assert (guard.check(tool, args, "a").kind or "ok") == reference.check(tool, args)


@settings(max_examples=150, deadline=None)
@given(CALLS, LIMITS, st.randoms(use_true_random=False))
def test_argument_order_never_matters(
    calls: list[tuple[str, dict[str, int]]], limits: Any, rnd: random.Random
) -> None:
    one, two = make_guard(limits), make_guard(limits)
    for tool, args in calls:
        items = list(args.items())
        rnd.shuffle(items)
        assert one.check(tool, args, "a").kind == two.check(tool, dict(items), "a").kind


@settings(max_examples=150, deadline=None)
@given(CALLS, LIMITS, st.randoms(use_true_random=False), st.sampled_from([None, 0, 2]))
def test_arguments_as_json_text_in_any_order_and_spacing_are_the_same_calls(
    calls: list[tuple[str, dict[str, int]]], limits: Any, rnd: random.Random, indent: int | None
) -> None:
    one, two = make_guard(limits), make_guard(limits)
    for tool, args in calls:
        items = list(args.items())
        rnd.shuffle(items)
        assert (
            one.check(tool, args, "a").kind
            == two.check(tool, json.dumps(dict(items), indent=indent), "a").kind
        )


@settings(max_examples=150, deadline=None)
@given(CALLS, LIMITS, st.integers(1, 5))
def test_denied_calls_never_change_later_decisions(
    calls: list[tuple[str, dict[str, int]]], limits: Any, retries: int
) -> None:
    plain, retried = make_guard(limits), make_guard(limits)
    for tool, args in calls:
        expected = plain.check(tool, args, "a")
        first = retried.check(tool, args, "a")
        assert first.kind == expected.kind
        if not first.allowed:
            for _ in range(retries):  # the model insists; nothing may change
                assert not retried.check(tool, args, "a").allowed


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 20), st.integers(0, 60))
def test_cap_is_permanent(cap: int, extra: int) -> None:
    guard = Guard.from_config(
        {"circuit_breaker": {"max_calls_per_agent": cap}, "guard": {"abort_after_denials": 0}}
    )
    results = [guard.check("f", {"i": i}, "a").kind for i in range(cap + extra)]
    assert results == [None] * cap + ["cap"] * extra


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 5), st.lists(st.integers(0, 2), max_size=60))
def test_loop_brake_streak_resets_on_a_different_call(repeats: int, sequence: list[int]) -> None:
    guard = Guard.from_config(
        {
            "circuit_breaker": {"enabled": False},
            "loop_brake": {"max_repeats": repeats},
            "guard": {"abort_after_denials": 0},
        }
    )
    streak, last = 0, None
    for value in sequence:
        decision = guard.check("f", {"v": value}, "a")
        run_length = streak + 1 if value == last else 1
        assert decision.allowed == (run_length <= repeats)
        if decision.allowed:
            streak, last = run_length, value
