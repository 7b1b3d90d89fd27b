"""Per-agent state kept by the in-process store: small, bounded, O(1) per call."""

from __future__ import annotations

from array import array

__all__ = ["AgentState", "CountingWindow"]


class CountingWindow:
    """The last ``size`` call keys and how often each occurs among them.

    Keys are non-zero 63-bit integers. The ring and the counts live in flat arrays
    (an open-addressing table with linear probing) instead of a dict of int objects:
    about 7 KiB for a full window of 200 distinct calls instead of about 18 KiB.
    Both grow with use, so an agent that made three calls costs a few hundred bytes.
    """

    __slots__ = ("_counts", "_keys", "_mask", "_pos", "_ring", "_size", "_used")

    def __init__(self, size: int) -> None:
        self._size = size
        self._ring = array("q")
        self._pos = 0
        self._keys = array("q", bytes(8 * 8))
        self._counts = array("I", bytes(4 * 8))
        self._mask = 7
        self._used = 0

    def __len__(self) -> int:
        return len(self._ring)

    def count(self, key: int) -> int:
        """How many of the window's entries are ``key``."""
        return self._counts[self._find(key)]

    def push(self, key: int) -> None:
        """Append ``key``; the oldest entry leaves once the window is full."""
        ring = self._ring
        if len(ring) < self._size:
            ring.append(key)
        else:
            pos = self._pos
            oldest = ring[pos]
            ring[pos] = key
            self._pos = pos + 1 if pos + 1 < self._size else 0
            if oldest == key:
                return
            self._decrement(oldest)
        self._increment(key)

    def _find(self, key: int) -> int:
        keys, mask = self._keys, self._mask
        i = key & mask
        while True:
            k = keys[i]
            if k == key or k == 0:
                return i
            i = (i + 1) & mask

    def _increment(self, key: int) -> None:
        i = self._find(key)
        if self._keys[i] == 0:
            self._keys[i] = key
            self._used += 1
        self._counts[i] += 1
        if 2 * self._used > self._mask + 1:
            self._grow()

    def _decrement(self, key: int) -> None:
        i = self._find(key)
        self._counts[i] -= 1
        if self._counts[i] == 0:
            self._remove_slot(i)
            self._used -= 1

    def _remove_slot(self, i: int) -> None:
        """Backward-shift deletion: keep every probe chain unbroken."""
        keys, counts, mask = self._keys, self._counts, self._mask
        j = i
        while True:
            j = (j + 1) & mask
            k = keys[j]
            if k == 0:
                break
            if not _cyclically_between(k & mask, i, j):
                keys[i], counts[i] = k, counts[j]
                i = j
        keys[i] = 0
        counts[i] = 0

    def _grow(self) -> None:
        old = [(k, c) for k, c in zip(self._keys, self._counts, strict=True) if k]
        slots = 2 * (self._mask + 1)
        self._keys = array("q", bytes(8 * slots))
        self._counts = array("I", bytes(4 * slots))
        self._mask = slots - 1
        for key, n in old:
            i = self._find(key)
            self._keys[i] = key
            self._counts[i] = n


def _cyclically_between(home: int, lo: int, hi: int) -> bool:
    """Whether ``home`` lies in the cyclic interval ``(lo, hi]``."""
    if lo <= hi:
        return lo < home <= hi
    return home > lo or home <= hi


class AgentState:
    """Everything the in-process store keeps for one agent."""

    __slots__ = (
        "__weakref__",
        "calls",
        "denials_in_row",
        "reported",
        "seen",
        "streak",
        "streak_digest",
        "window",
    )

    def __init__(self, window: int) -> None:
        self.calls = 0
        self.window = CountingWindow(window)
        self.streak_digest = b""
        self.streak = 0
        self.denials_in_row = 0
        self.reported: frozenset[str] = frozenset()
        self.seen = 0.0
