"""Properties over random timelines of calls and results, with every breaker on."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from loopfuse import Guard

ALL_ON: dict[str, Any] = {
    "circuit_breaker": {"duplicate_limit": 3, "result_limit": 3, "same_result_limit": 2},
    "loop_brake": {"max_repeats": 2, "result_aware": True},
    "cycle": {"only_with_results": False, "min_repeats": 2},
    "near_duplicate": {"limit": 3, "only_with_results": False},
    "same_error": {"limit": 2, "identical_limit": 2},
}

tools = st.sampled_from(["a", "b", "c"])
args = st.dictionaries(st.sampled_from(["x", "y", "z"]), st.integers(0, 2), max_size=3)
results = st.one_of(st.none(), st.sampled_from(["r1", "r2", "E: boom"]))
steps = st.lists(st.tuples(tools, args, results), max_size=40)


def replay(guard: Guard, timeline: list[tuple[str, dict[str, int], str | None]]) -> list[Any]:
    out = []
    for tool, arguments, result in timeline:
        d = guard.check(tool, arguments, "a")
        out.append((d.allowed, d.kind, d.count))
        if d.allowed and result is not None:
            guard.record_result(tool, arguments, result, "a", ok=not result.startswith("E"))
    return out


@settings(max_examples=60, deadline=None)
@given(steps)
def test_argument_order_never_matters(timeline: list[tuple[str, dict[str, int], str | None]]) -> None:
    reordered = [(t, dict(reversed(list(a.items()))), r) for t, a, r in timeline]
    assert replay(Guard.from_config(ALL_ON), timeline) == replay(Guard.from_config(ALL_ON), reordered)


@settings(max_examples=60, deadline=None)
@given(steps)
def test_denied_calls_never_change_later_decisions(
    timeline: list[tuple[str, dict[str, int], str | None]],
) -> None:
    # The loop brake counts refused attempts on purpose (its streak), so it is left out.
    clean = Guard.from_config({**ALL_ON, "loop_brake": {"enabled": False}})
    other = Guard.from_config({**ALL_ON, "loop_brake": {"enabled": False}})
    first = replay(clean, timeline)
    retried = []
    for tool, arguments, result in timeline:
        d = other.check(tool, arguments, "a")
        if not d.allowed:
            other.check(tool, arguments, "a")
        elif result is not None:
            other.record_result(tool, arguments, result, "a", ok=not result.startswith("E"))
        retried.append((d.allowed, d.kind, d.count))
    assert first == retried


@settings(max_examples=60, deadline=None)
@given(steps)
def test_shadow_mode_never_denies(timeline: list[tuple[str, dict[str, int], str | None]]) -> None:
    shadow = Guard.from_config({**ALL_ON, "guard": {"mode": "shadow", "abort_after_denials": 1}})
    enforce = Guard.from_config(ALL_ON)
    seen = replay(shadow, timeline)
    assert all(allowed for allowed, _, _ in seen)
    expected = replay(enforce, timeline)
    first = next((i for i, (allowed, _, _) in enumerate(expected) if not allowed), len(expected))
    # Up to and including enforce's first denial, shadow reports exactly the same verdicts.
    assert [(k, c) for _, k, c in seen[: first + 1]] == [(k, c) for _, k, c in expected[: first + 1]]


@settings(max_examples=60, deadline=None)
@given(steps, st.lists(st.booleans(), min_size=40, max_size=40))
def test_results_reported_for_denied_calls_change_nothing(
    timeline: list[tuple[str, dict[str, int], str | None]], reports: list[bool]
) -> None:
    """A host may report a result for every step, the denial text included, or report twice."""
    config = {**ALL_ON, "loop_brake": {"enabled": False}}
    clean, noisy = Guard.from_config(config), Guard.from_config(config)
    expected = replay(clean, timeline)
    seen = []
    for (tool, arguments, result), twice in zip(timeline, reports, strict=False):
        d = noisy.check(tool, arguments, "a")
        seen.append((d.allowed, d.kind, d.count))
        if not d.allowed:
            noisy.record_result(tool, arguments, d.message, "a", ok=twice)
        elif result is not None:
            noisy.record_result(tool, arguments, result, "a", ok=not result.startswith("E"))
            if twice:  # a second, different report of the same call
                noisy.record_result(tool, arguments, result + " again", "a", ok=False)
    assert seen == expected
