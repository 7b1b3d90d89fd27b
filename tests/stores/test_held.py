"""The results a Redis store holds back (``redis_held``), on their own: no server."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from loopfuse.stores.redis_held import OVERALL, Held, HeldResults


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


def test_a_round_trip_never_waits_for_one_its_own_thread_has_in_flight() -> None:
    """An event loop's task carries the agent's results and awaits Redis; the loop's thread
    then makes a sync call for the agent (or exits): waiting would never end."""
    results = HeldResults(60.0, lambda agent: None)
    results.add("a", _held(b"1"))
    in_flight = results.carrying("a")  # started, not landed: its task awaits the reply
    with in_flight as carried:
        assert [h.arg for h in carried] == [b"1"]
        results.add("a", _held(b"2"))
        with results.carrying("a") as second:  # the same thread: goes at once, carrying nothing
            assert second == []
    with results.carrying("a") as carried:  # the result held meanwhile goes with the next trip
        assert [h.arg for h in carried] == [b"2"]


def test_a_round_trip_waits_for_another_threads_flight_a_bounded_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("loopfuse.stores.redis_held.FLIGHT_PATIENCE", 0.2)
    results = _with_a_flight_that_never_lands()
    begun = time.monotonic()
    with results.carrying("a") as carried:
        assert carried == []
    assert 0.2 <= time.monotonic() - begun < 5


def test_a_flight_that_never_lands_delays_only_the_round_trips_of_its_patience(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Every later round trip of the agent waited the whole patience again (30 s each check)."""
    monkeypatch.setattr("loopfuse.stores.redis_held.FLIGHT_PATIENCE", 0.3)
    results = _with_a_flight_that_never_lands()
    with results.carrying("a"):
        pass  # waited out the patience
    begun = time.monotonic()
    for _ in range(3):
        with results.carrying("a") as carried:
            assert carried == []
    assert time.monotonic() - begun < 0.2


def _with_a_flight_that_never_lands() -> HeldResults:
    """Held results of agent "a" whose round trip, started by another thread, never ends."""
    results = HeldResults(60.0, lambda agent: None)
    results.add("a", _held(b"1"))
    started = threading.Event()

    def never_lands() -> None:
        results.carrying("a").__enter__()
        started.set()

    threading.Thread(target=never_lands, daemon=True).start()
    assert started.wait(5)
    return results


def test_a_result_beyond_the_bound_sends_two_agents_not_the_whole_backlog() -> None:
    """The flusher thread stuck on a slow Redis: the result that goes past ``4 * OVERALL`` had
    its caller send every agent's results, one round trip after another (12 s through a proxy
    adding 2 ms). Now its own agent's and the oldest agent's go, so what is held stays bounded."""
    stuck = threading.Event()

    def send(agent: str) -> None:  # a round trip to a Redis that does not answer
        stuck.wait(10)

    results = HeldResults(60.0, send)
    try:
        urgent = [results.add(f"agent-{i}", _held(b"1")) for i in range(4 * OVERALL + 1)]
        assert all(u == [] for u in urgent[:-1])
        assert urgent[-1] == [f"agent-{4 * OVERALL}", "agent-0"]
        assert results.add("agent-0", _held(b"2")) == ["agent-0"]  # its own, also the oldest
    finally:
        stuck.set()
        results.close()
