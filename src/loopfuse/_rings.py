"""The rings an agent's state counts in: its last calls (``CountingWindow``), the latest
digest of each recent key (``RecentDigests``) and its last few digests (``RecentKeys``), as
8-byte entries of ``bytearray`` rings searched in C; past ``SCAN_MAX`` entries,
open-addressing tables in flat arrays."""

from __future__ import annotations

from array import array

__all__ = ["SCAN_MAX", "CountingWindow", "RecentDigests", "RecentKeys"]

SCAN_MAX = 256  # entries: up to this length a ring is searched, longer ones keep a table


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

    def newest_before(self, index: int, first: int, second: int) -> int | None:
        """The index of the newest entry pushed before the ``index``-th that is ``first`` or
        ``second``; None when the window holds none."""
        table, ring = self._table, self._ring
        if table is not None and not (table.count(first) or table.count(second)):
            return None
        one, two = first.to_bytes(8), second.to_bytes(8)
        if ring.find(one) < 0 and ring.find(two) < 0:
            return None  # the usual case, a result new to the window: two searches in C
        newest = max(self._newest_index(one, index), self._newest_index(two, index))
        return None if newest < 0 else newest

    def _newest_index(self, entry: bytes, before: int) -> int:
        """The index of the newest ``entry`` pushed before the ``before``-th, or -1. Searched
        backwards from the slot of the ``before``-th (older entries come first that way, then
        those pushed after it), so the first match decides, however many the window holds."""
        ring, last, size = self._ring, self.pushed - 1, self._size
        if before > last:  # not pushed yet: every entry is older, the newest just below this slot
            at, skip = (self.pushed % size) << 3, 0
        elif self.holds(before):
            at, skip = (before % size) << 3, 8
        else:
            return -1  # it left the window, and every older entry before it
        for start, end in ((0, at), (at + skip, len(ring))):
            found = _newest(ring, entry, start, end)
            if found >= 0:
                index = last - (last - (found >> 3)) % size
                return index if index < before else -1
        return -1

    def holds(self, index: int) -> bool:
        """Whether the entry pushed as the ``index``-th (from 0) is still in the window."""
        return 0 <= self.pushed - 1 - index < len(self._ring) >> 3

    def replace(self, index: int, key: int) -> bool:
        """Re-key the entry pushed as the ``index``-th (from 0) if it is still in the window."""
        if not 0 <= self.pushed - 1 - index < len(self._ring) >> 3:  # holds, inlined: once per result
            return False
        self._put(index % self._size, key)
        return True

    def _put(self, slot: int, key: int) -> None:
        at = slot << 3
        if self._table is not None:
            self._table.swap(int.from_bytes(self._ring[at : at + 8]), key)
        self._ring[at : at + 8] = key.to_bytes(8)


class RecentDigests:
    """The latest digest of each key updated among the last ``size`` updates.

    Up to ``SCAN_MAX`` the updates themselves: two rings of 8-byte entries, keys and digests,
    the update numbered i at i % size; a key's digest is its newest entry's, found by searching
    the keys backwards from the newest (about 0.4 KiB for 32 updates, 3.2 KiB for 200). A
    longer one is a table (``_DigestTable``). Digests are integers in [0, 2**63).
    """

    __slots__ = ("_digests", "_keys", "_size", "_table", "_updates")

    def __init__(self, size: int) -> None:
        self._size = size
        self._updates = 0
        self._keys, self._digests = bytearray(), bytearray()
        self._table = _DigestTable(size) if size > SCAN_MAX else None

    def __len__(self) -> int:
        """How many keys are kept (a scan: for tests and figures, not per call)."""
        if self._table is not None:
            return len(self._table)
        keys = self._keys
        return len({bytes(keys[at : at + 8]) for at in range(0, len(keys), 8)})

    def get(self, key: int) -> int | None:
        if self._table is not None:
            return self._table.get(key)
        keys, entry = self._keys, key.to_bytes(8)
        if keys.find(entry) < 0:
            return None  # the usual case, a key not updated lately: one search
        split = (self._updates % self._size) << 3  # the oldest entry's offset once the ring is full
        at = _newest(keys, entry, 0, split)
        if at < 0:
            at = _newest(keys, entry, split, len(keys))
        return None if at < 0 else int.from_bytes(self._digests[at : at + 8])

    def holds(self, key: int) -> bool:
        """Whether ``key`` was updated lately (``get`` is not None), without reading its digest."""
        if self._table is not None:
            return self._table.get(key) is not None
        return _holds(self._keys, key.to_bytes(8))

    def put(self, key: int, digest: int) -> None:
        """Set ``key``'s digest; a key not updated in the last ``size`` updates reads as absent."""
        if self._table is not None:
            self._table.put(key, digest)
            return
        at = (self._updates % self._size) << 3
        self._updates += 1
        if len(self._keys) == at:
            self._keys += key.to_bytes(8)
            self._digests += digest.to_bytes(8)
        else:
            self._keys[at : at + 8] = key.to_bytes(8)
            self._digests[at : at + 8] = digest.to_bytes(8)


class RecentKeys:
    """The last ``size`` keys added (at most ``SCAN_MAX``), one ring searched in C."""

    __slots__ = ("_added", "_ring", "_size")

    def __init__(self, size: int) -> None:
        self._size, self._added, self._ring = size, 0, bytearray()

    def __contains__(self, key: int) -> bool:
        return _holds(self._ring, key.to_bytes(8))

    def add(self, key: int) -> None:
        at = (self._added % self._size) << 3
        self._added += 1
        self._ring[at : at + 8] = key.to_bytes(8)


def _holds(ring: bytearray, entry: bytes) -> bool:
    """Whether ``ring`` has an 8-byte entry equal to ``entry``."""
    at = ring.find(entry)
    while at > 0 and at & 7:  # a match across two entries: look further on
        at = ring.find(entry, at + 1)
    return at >= 0


def _newest(ring: bytearray, entry: bytes, start: int, end: int) -> int:
    """The offset of the last 8-byte entry of ``ring[start:end]`` equal to ``entry``, or -1."""
    at = ring.rfind(entry, start, end)
    while at >= 0 and at & 7:  # a match across two entries: look further back
        at = ring.rfind(entry, start, at + 7)
    return at


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


class _DigestTable:
    """``RecentDigests`` past ``SCAN_MAX``: a flat open-addressing table (keys, digests, and
    the update number that wrote each). An entry older than ``size`` updates reads as absent
    and keeps its slot until the table is rebuilt (when 3/4 of its slots are taken), so no
    update pays for a deletion."""

    __slots__ = ("_digests", "_keys", "_mask", "_size", "_stamps", "_updates", "_used")

    def __init__(self, size: int) -> None:
        self._size = size
        self._updates = 0
        self._keys = array("q", bytes(8 * 8))
        self._digests = array("q", bytes(8 * 8))
        self._stamps = array("q", bytes(8 * 8))
        self._mask = 7
        self._used = 0

    def __len__(self) -> int:
        """How many keys are kept (a scan: for tests and figures, not per call)."""
        oldest = self._updates - self._size
        return sum(1 for k, s in zip(self._keys, self._stamps, strict=True) if k and s > oldest)

    def get(self, key: int) -> int | None:
        keys, mask = self._keys, self._mask
        i = key & mask
        while True:  # probe, inlined: this runs on every check
            k = keys[i]
            if k == key:
                return self._digests[i] if self._stamps[i] > self._updates - self._size else None
            if k == 0:
                return None
            i = (i + 1) & mask

    def put(self, key: int, digest: int) -> None:
        """Set ``key``'s digest; a key not updated in the last ``size`` updates reads as absent."""
        self._updates += 1
        keys, mask = self._keys, self._mask
        i = key & mask
        while True:  # probe, inlined
            k = keys[i]
            if k == key or k == 0:
                break
            i = (i + 1) & mask
        self._digests[i], self._stamps[i] = digest, self._updates
        if k == 0:
            keys[i] = key
            self._used += 1
            if 4 * self._used > 3 * (mask + 1):
                self._rebuild()

    def _rebuild(self) -> None:
        """Drop the entries older than ``size`` updates, in a table at most half full."""
        oldest = self._updates - self._size
        live = [
            e for e in zip(self._keys, self._digests, self._stamps, strict=True) if e[0] and e[2] > oldest
        ]
        slots = slots_for(len(live))
        self._keys, self._digests, self._stamps = (array("q", bytes(8 * slots)) for _ in range(3))
        self._mask, self._used = slots - 1, len(live)
        for key, digest, stamp in live:
            i = probe(self._keys, self._mask, key)
            self._keys[i], self._digests[i], self._stamps[i] = key, digest, stamp


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
