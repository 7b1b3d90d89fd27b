"""Hypothesis properties of the per-agent tables the breakers count in, against plain Python."""

from __future__ import annotations

from collections import deque

from hypothesis import given, settings
from hypothesis import strategies as st

from loopfuse._state import CountingWindow, RecentDigests


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 30), st.lists(st.integers(1, 12), max_size=300))
def test_counting_window_matches_a_deque(size: int, keys: list[int]) -> None:
    window, reference = CountingWindow(size), deque[int](maxlen=size)
    for key in keys:
        window.push(key << 20)  # collide in the low bits to exercise probing and deletion
        reference.append(key << 20)
        assert all(window.count(k << 20) == reference.count(k << 20) for k in range(1, 13))


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 30), st.lists(st.tuples(st.integers(1, 40), st.integers(1, 5)), max_size=300))
def test_recent_digests_keep_each_key_for_its_last_size_updates(
    size: int, updates: list[tuple[int, int]]
) -> None:
    table, latest = RecentDigests(size), {}
    for n, (key, digest) in enumerate(updates, start=1):
        table.put(key << 20, digest)  # collide in the low bits to exercise probing and deletion
        latest[key] = (digest, n)
        alive = {k: d for k, (d, at) in latest.items() if at > n - size}
        assert all(table.get(k << 20) == alive.get(k) for k in range(1, 41))
        assert len(table) == len(alive)


def test_recent_digests_stay_bounded_however_many_keys_pass_through() -> None:
    table = RecentDigests(50)
    for key in range(1, 20_001):
        table.put(key << 20, key)
        assert len(table._keys) <= 256  # a power of two at least twice the 50 live keys, plus slack
    assert len(table) == 50
    assert table.get(19_951 << 20) == 19_951 and table.get(19_950 << 20) is None
