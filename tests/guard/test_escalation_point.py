"""escalation_point(config) is where a real Guard ends a loop of one repeated call."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from loopfuse import Guard, parse_config
from loopfuse._escalation import escalation_point


def stopped_at(guard: Guard, calls: int = 200) -> int | None:
    """The call at which a guard escalates a loop of one call with the same result each time."""
    for n in range(1, calls + 1):
        d = guard.check("search", {"q": "acme"}, "a")
        if d.escalate:
            return n
        if d.allowed:
            guard.record_result("search", {"q": "acme"}, "no results", "a")
    return None


def test_the_defaults_stop_a_loop_at_call_8() -> None:
    assert escalation_point(parse_config({})) == stopped_at(Guard()) == 8


LIMITS = st.fixed_dictionaries(
    {
        "circuit_breaker": st.fixed_dictionaries(
            {
                "duplicate_limit": st.integers(1, 12),
                "max_calls_per_agent": st.sampled_from([0, 5, 300]),
                "result_aware": st.booleans(),
                "same_result_limit": st.integers(0, 12),
                "progress_limit": st.integers(0, 12),
            },
            optional={"result_limit": st.integers(0, 12), "enabled": st.booleans()},
        ),
        "near_duplicate": st.fixed_dictionaries(
            {"limit": st.integers(1, 12), "enabled": st.booleans()},
            optional={"result_aware": st.booleans(), "only_with_results": st.booleans()},
        ),
        "guard": st.fixed_dictionaries({"abort_after_denials": st.integers(0, 5)}),
    },
    optional={"loop_brake": st.fixed_dictionaries({"max_repeats": st.integers(1, 12)})},
)


@settings(max_examples=150, deadline=None)
@given(LIMITS)
def test_the_point_is_where_the_guard_stops_the_loop(mapping: dict[str, Any]) -> None:
    assert escalation_point(parse_config(mapping)) == stopped_at(Guard.from_config(mapping))


def test_shadow_mode_never_stops() -> None:
    mapping = {"guard": {"mode": "shadow"}}
    assert escalation_point(parse_config(mapping)) is None is stopped_at(Guard.from_config(mapping))
