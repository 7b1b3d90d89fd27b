"""Hypothesis properties of the per-agent tables the breakers count in, against plain Python."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from loopfuse._state import CountingWindow, RecentDigests
from loopfuse._window import SCAN_MAX

# Keys of bytes 0 and 1 only: they share their low bits (probing, deletion) and two entries
# side by side often hold a third key across their boundary (a scan must not count it).
KEYS = [int.from_bytes(bytes(random.Random(n).choices((0, 1), k=8))) or 1 for n in range(12)]
# Windows up to SCAN_MAX count by scanning their ring; longer ones keep a count table too.
SIZES = st.sampled_from([1, 2, 3, 7, 30, SCAN_MAX, SCAN_MAX + 1, SCAN_MAX + 9])


@settings(max_examples=300, deadline=None)
@given(SIZES, st.lists(st.tuples(st.integers(1, 12), st.integers(0, 40)), max_size=700))
def test_counting_window_matches_a_plain_record_of_its_last_entries(
    size: int, steps: list[tuple[int, int]]
) -> None:
    """Pushes, and re-keyings of an entry by how long ago it was pushed (one past the window
    is refused), counted as a dict of the last ``size`` entries counts them."""
    window, entries = CountingWindow(size), dict[int, int]()
    for key, back in steps:
        key = KEYS[key - 1]
        if back % 3:
            window.push(key)
            entries[window.pushed - 1] = key
            entries.pop(window.pushed - 1 - size, None)
        else:
            index = window.pushed - 1 - back
            assert window.replace(index, key) == (index in entries)
            if index in entries:
                entries[index] = key
        assert len(window) == len(entries)
        assert all(window.count(k) == list(entries.values()).count(k) for k in KEYS)


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
