"""The window of an agent's last calls: which keys, and how often each occurs among them."""

from __future__ import annotations

from array import array

__all__ = ["CountingWindow", "probe", "slots_for"]

SCAN_MAX = 256  # entries: up to this window length a count scans the ring


class CountingWindow:
    """The last ``size`` call keys and how often each occurs among them.

    Keys are non-zero 63-bit integers, kept as 8-byte entries of one ``bytearray`` ring (the
    entry pushed as the i-th at i % size, as the Redis store keeps its rings). Up to
    ``SCAN_MAX`` entries a count is a search of the ring in C, about 1.5 instructions a
    byte: cheaper than a table probed in Python, and no memory beyond the ring (1.6 KiB
    for 200 calls). A longer window also keeps an open-addressing count table
    (``_CountTable``), so that a count costs the same whatever its length.
    """

    __slots__ = ("_ring", "_size", "_table", "pushed")

    def __init__(self, size: int) -> None:
        self._size = size
        self.pushed = 0
        self._ring = bytearray()
        self._table = _CountTable() if size > SCAN_MAX else None

    def __len__(self) -> int:
        return len(self._ring) >> 3

    def count(self, key: int) -> int:
        """How many of the window's entries are ``key``."""
        if self._table is not None:
            return self._table.count(key)
        ring, entry = self._ring, key.to_bytes(8)
        at, n = ring.find(entry), 0
        while at >= 0:  # an entry only where it starts at a multiple of 8
            if at & 7:
                at = ring.find(entry, at + 1)
            else:
                n += 1
                at = ring.find(entry, at + 8)
        return n

    def push(self, key: int) -> None:
        """Append ``key``; the oldest entry leaves once the window is full."""
        index = self.pushed
        self.pushed = index + 1
        if len(self._ring) < self._size << 3:
            self._ring += key.to_bytes(8)
            if self._table is not None:
                self._table.swap(0, key)
        else:
            self._put(index % self._size, key)

    def replace(self, index: int, key: int) -> bool:
        """Re-key the entry pushed as the ``index``-th (from 0) if it is still in the window."""
        if not 0 <= self.pushed - 1 - index < len(self._ring) >> 3:
            return False
        self._put(index % self._size, key)
        return True

    def _put(self, slot: int, key: int) -> None:
        at = slot << 3
        if self._table is not None:
            self._table.swap(int.from_bytes(self._ring[at : at + 8]), key)
        self._ring[at : at + 8] = key.to_bytes(8)


class _CountTable:
    """How often each key occurs: an open-addressing table (linear probing, backward-shift
    deletion) in flat arrays, about 12 bytes a slot, at most half full."""

    __slots__ = ("_counts", "_keys", "_mask", "_used")

    def __init__(self) -> None:
        self._keys = array("q", bytes(8 * 8))
        self._counts = array("I", bytes(4 * 8))
        self._mask = 7
        self._used = 0

    def count(self, key: int) -> int:
        keys, mask = self._keys, self._mask
        i = key & mask
        while True:  # probe, inlined: this runs on every check
            k = keys[i]
            if k == key:
                return self._counts[i]
            if k == 0:
                return 0
            i = (i + 1) & mask

    def swap(self, old: int, new: int) -> None:
        """One occurrence of ``old`` leaves (none when ``old`` is 0), one of ``new`` enters."""
        keys, counts, mask = self._keys, self._counts, self._mask
        if old:
            i = old & mask
            while keys[i] != old:  # the key is in the table
                i = (i + 1) & mask
            if counts[i] > 1:
                counts[i] -= 1
            else:
                _remove_slot(keys, counts, mask, i)
                self._used -= 1
        i = probe(keys, mask, new)
        if keys[i] == new:
            counts[i] += 1
            return
        keys[i], counts[i] = new, 1
        self._used += 1
        if 2 * self._used > mask + 1:
            self._grow()

    def _grow(self) -> None:
        old = [(k, c) for k, c in zip(self._keys, self._counts, strict=True) if k]
        slots = 2 * (self._mask + 1)
        self._keys = array("q", bytes(8 * slots))
        self._counts = array("I", bytes(4 * slots))
        self._mask = slots - 1
        for key, n in old:
            i = probe(self._keys, self._mask, key)
            self._keys[i] = key
            self._counts[i] = n


def slots_for(live: int) -> int:
    """A power of two at least twice ``live`` (and at least 8)."""
    slots = 8
    while slots < 2 * live + 2:
        slots *= 2
    return slots


def probe(keys: array[int], mask: int, key: int) -> int:
    """The slot holding ``key``, or the empty slot where it would go (linear probing)."""
    i = key & mask
    while True:
        k = keys[i]
        if k == key or k == 0:
            return i
        i = (i + 1) & mask


def _remove_slot(keys: array[int], counts: array[int], mask: int, i: int) -> None:
    """Empty slot ``i`` by backward-shift deletion (a key moves with its count), so that
    every probe chain stays unbroken."""
    j = i
    while True:
        j = (j + 1) & mask
        k = keys[j]
        if k == 0:
            break
        if (j - (k & mask)) & mask >= (j - i) & mask:  # its home is not in (i, j]: move it to i
            keys[i], counts[i] = k, counts[j]
            i = j
    keys[i] = counts[i] = 0
