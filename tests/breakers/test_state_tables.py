"""Hypothesis properties of the per-agent tables the breakers count in, against plain Python."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loopfuse._rings import SCAN_MAX, RecentKeys
from loopfuse._state import CountingWindow, RecentDigests

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
    is refused), counted (and the newest entry before an index found) as a dict of the last
    ``size`` entries counts (and finds) them."""
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
        before = window.pushed - back % 5
        found = [i for i, k in entries.items() if i < before and k in (key, KEYS[back % 12])]
        assert window.newest_before(before, key, KEYS[back % 12]) == max(found, default=None)


@settings(max_examples=300, deadline=None)
@given(SIZES, st.lists(st.tuples(st.integers(1, 12), st.integers(0, 2**63 - 1)), max_size=700))
def test_recent_digests_keep_each_key_for_its_last_size_updates(
    size: int, updates: list[tuple[int, int]]
) -> None:
    table, latest = RecentDigests(size), dict[int, tuple[int, int]]()
    for n, (key, digest) in enumerate(updates, start=1):
        table.put(KEYS[key - 1], digest)
        latest[KEYS[key - 1]] = (digest, n)
        alive = {k: d for k, (d, at) in latest.items() if at > n - size}
        assert all(table.get(k) == alive.get(k) for k in KEYS)
        assert all(table.holds(k) == (k in alive) for k in KEYS)
        assert len(table) == len(alive)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from([1, 2, 3, 7, 16]), st.lists(st.integers(1, 12), max_size=60))
def test_recent_keys_hold_the_last_size_keys_added(size: int, added: list[int]) -> None:
    recent = RecentKeys(size)
    for n, key in enumerate(added, start=1):
        recent.add(KEYS[key - 1])
        last = {KEYS[k - 1] for k in added[max(0, n - size) : n]}
        assert all((k in recent) == (k in last) for k in KEYS)


@pytest.mark.parametrize("size", [50, SCAN_MAX + 50])
def test_recent_digests_stay_bounded_however_many_keys_pass_through(size: int) -> None:
    table = RecentDigests(size)
    for key in range(1, 20_001):
        table.put(key << 20, key)
        # A ring of the last updates; past SCAN_MAX a table of a power of two at least twice
        # the live keys, rebuilt when 3/4 full.
        held = len(table._keys) if table._table is None else len(table._table._keys) * 8
        assert held <= 8 * 4 * size
    assert len(table) == size
    assert table.get((20_001 - size) << 20) == 20_001 - size and table.get((20_000 - size) << 20) is None
