"""The results a Redis store holds back (``redis_held``), on their own: no server."""

from __future__ import annotations

from typing import Any

import pytest

from loopfuse.stores.redis_held import Held, HeldResults


def _held(arg: bytes) -> Held:
    return Held("fetch", "a", arg)


def test_results_a_round_trip_never_sent_are_held_again_ahead_of_newer_ones() -> None:
    lost: list[Any] = []
    results = HeldResults(0.0, lambda agent: None, lambda *why: lost.append(why))
    results.add("a", _held(b"1"))
    results.add("a", _held(b"2"))
    flight = results.carrying("a")
    with flight as carried:
        assert [h.arg for h in carried] == [b"1", b"2"]
        results.add("a", _held(b"3"))  # reported while the round trip waits
        flight.unsent()
    assert results.agents() == ["a"]  # the agent is no longer in flight: its next round trip may go
    with results.carrying("a") as carried:
        assert [h.arg for h in carried] == [b"1", b"2", b"3"]
    assert results.agents() == []
    assert lost == []


def test_results_a_failed_round_trip_sent_are_reported_lost_not_held_again() -> None:
    lost: list[Any] = []
    results = HeldResults(0.0, lambda agent: None, lambda *why: lost.append(why[:2]))
    results.add("a", _held(b"1"))
    with pytest.raises(OSError), results.carrying("a"):
        raise OSError("reset")
    assert results.agents() == []
    assert lost == [("fetch", "a")]
