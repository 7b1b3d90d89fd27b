"""RapidRefillTracker on explicit timelines: tool turns and compactions, no host."""

from __future__ import annotations

import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from loopfuse.compaction import RapidRefillTracker
from loopfuse.errors import ConfigError


def turns(tracker: RapidRefillTracker, count: int) -> None:
    for _ in range(count):
        tracker.note_tool_turn()


def compact(tracker: RapidRefillTracker) -> bool:
    """One compaction attempt as a host makes it; True when the summarization call was spent."""
    gate = tracker.gate()
    if gate.blocked:
        return False
    tracker.commit_compaction(gate)
    return True


@given(st.integers(2, 8), st.lists(st.integers(0, 50), min_size=1, max_size=60))
def test_healthy_gaps_never_trip_however_long_the_run(threshold: int, extra: list[int]) -> None:
    tracker = RapidRefillTracker(tool_turn_threshold=threshold)
    for more in extra:
        turns(tracker, threshold + more)
        gate = tracker.gate()
        assert not gate.blocked and gate.projected_consecutive_rapid_refills == 0
        tracker.commit_compaction(gate)
    assert tracker.status().consecutive_rapid_refills == 0


def test_first_compaction_of_a_session_is_never_rapid() -> None:
    gate = RapidRefillTracker(max_consecutive_rapid_refills=1).gate()
    assert (gate.blocked, gate.rapid, gate.gap) == (False, False, None)
    assert "first compaction" in gate.reason


def test_a_gap_of_exactly_the_threshold_is_not_rapid() -> None:
    tracker = RapidRefillTracker(tool_turn_threshold=2, max_consecutive_rapid_refills=1)
    compact(tracker)
    turns(tracker, 2)
    gate = tracker.gate()
    assert (gate.blocked, gate.rapid, gate.gap, gate.projected_consecutive_rapid_refills) == (
        False,
        False,
        2,
        0,
    )


def test_trip_happens_before_the_futile_compaction() -> None:
    tracker = RapidRefillTracker(tool_turn_threshold=2, max_consecutive_rapid_refills=3)
    spent = [compact(tracker)]  # turn 0: first compaction
    for _ in range(3):  # one tool turn, then over the trigger again
        turns(tracker, 1)
        spent.append(compact(tracker))
    assert spent == [True, True, True, False]
    status = tracker.status()
    assert (status.compactions, status.refusals, status.latched) == (3, 1, True)
    assert status.last_gaps == (1, 1)
    assert "3 rapid refills in a row" in (status.latch_reason or "")


def test_blocked_gate_reports_the_projected_count() -> None:
    tracker = RapidRefillTracker(tool_turn_threshold=3, max_consecutive_rapid_refills=2)
    compact(tracker)
    turns(tracker, 2)
    compact(tracker)
    turns(tracker, 0)
    gate = tracker.gate()
    assert (gate.blocked, gate.projected_consecutive_rapid_refills, gate.gap) == (True, 2, 0)


def test_once_tripped_every_later_attempt_stays_refused() -> None:
    tracker = RapidRefillTracker(tool_turn_threshold=2, max_consecutive_rapid_refills=1)
    compact(tracker)
    assert not compact(tracker)  # rapid refill right away: tripped
    for _ in range(10):  # long healthy gaps and new user messages do not re-arm it
        turns(tracker, 5)
        gate = tracker.gate()
        assert gate.blocked and gate.reason.startswith("still stopped")
    status = tracker.status()
    assert (status.compactions, status.refusals, status.tool_turns_since_last_compaction) == (1, 11, 50)


def test_a_healthy_gap_breaks_a_run_of_rapid_refills() -> None:
    tracker = RapidRefillTracker(tool_turn_threshold=2, max_consecutive_rapid_refills=3)
    compact(tracker)
    for gap in (1, 1, 4, 1, 1):
        turns(tracker, gap)
        assert compact(tracker)
    assert tracker.status().consecutive_rapid_refills == 2


def test_a_refused_attempt_never_commits() -> None:
    tracker = RapidRefillTracker(max_consecutive_rapid_refills=1)
    compact(tracker)
    gate = tracker.gate()
    with pytest.raises(ValueError, match="blocked"):
        tracker.commit_compaction(gate)
    assert tracker.status().compactions == 1


def test_reset_rearms_but_keeps_the_tool_turn_clock() -> None:
    tracker = RapidRefillTracker(tool_turn_threshold=2, max_consecutive_rapid_refills=1)
    turns(tracker, 7)
    compact(tracker)
    compact(tracker)
    tracker.reset()
    status = tracker.status()
    assert (status.tool_turns, status.latched, status.refusals, status.consecutive_rapid_refills) == (
        7,
        False,
        0,
        0,
    )
    assert status.tool_turns_since_last_compaction is None
    gate = tracker.gate()
    assert not gate.blocked and gate.gap is None


def test_manual_compaction_rearms_and_counts_as_the_last_compaction() -> None:
    tracker = RapidRefillTracker(tool_turn_threshold=2, max_consecutive_rapid_refills=2)
    compact(tracker)
    turns(tracker, 1)
    compact(tracker)
    assert not compact(tracker)
    tracker.note_manual_compaction()
    status = tracker.status()
    assert (status.latched, status.manual_compactions, status.consecutive_rapid_refills) == (False, 1, 0)
    gate = tracker.gate()  # right after the manual one: rapid, but only the first in a row
    assert (gate.blocked, gate.rapid, gate.projected_consecutive_rapid_refills) == (False, True, 1)


def test_trip_latches_with_the_hosts_reason() -> None:
    tracker = RapidRefillTracker()
    gate = tracker.trip("the kept tail is over the trigger")
    assert gate.blocked and tracker.gate().blocked
    assert tracker.status().latch_reason == "the kept tail is over the trigger"


@pytest.mark.parametrize(
    ("kwargs", "key"),
    [
        ({"tool_turn_threshold": 0}, "tool_turn_threshold"),
        ({"tool_turn_threshold": True}, "tool_turn_threshold"),
        ({"max_consecutive_rapid_refills": 0}, "max_consecutive_rapid_refills"),
        ({"max_consecutive_rapid_refills": "3"}, "max_consecutive_rapid_refills"),
    ],
)
def test_invalid_values_are_refused_at_construction(kwargs: dict[str, object], key: str) -> None:
    with pytest.raises(ConfigError, match=key):
        RapidRefillTracker(**kwargs)  # type: ignore[arg-type]


def test_importing_the_tracker_pulls_in_no_third_party_module() -> None:
    code = (
        "import sys; before = set(sys.modules); from loopfuse.compaction import RapidRefillTracker; "
        "new = {m.split('.')[0] for m in set(sys.modules) - before}; "
        "print(sorted(new - set(sys.stdlib_module_names)))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() in ("['loopfuse']", "['loopfuse', 'orjson']")  # orjson: loopfuse[fast]


class Unprintable:
    def __str__(self) -> str:
        raise RuntimeError("no text")


@pytest.mark.parametrize("reason", [None, "", Unprintable()], ids=["none", "empty", "unprintable"])
def test_trip_latches_whatever_reason_the_host_gives(reason: object) -> None:
    """``trip(None)`` refused once without latching: the next gate was open."""
    tracker = RapidRefillTracker()
    assert tracker.trip(reason).blocked  # type: ignore[arg-type]
    assert tracker.latched and tracker.gate().blocked
    assert tracker.status().latch_reason == "stopped by the host"
