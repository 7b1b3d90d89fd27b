"""What reading found and skipped: counts, each skipped file with why, and bytes read.

Never fatal: a reader that meets something it cannot use records it here and goes on.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["SKIPPED_LIST_LIMIT", "ReadTally", "Skipped"]

SKIPPED_LIST_LIMIT = 10_000


@dataclass(frozen=True)
class Skipped:
    """A file (or part of one) that was not read, and why, in words a user understands."""

    path: Path
    reason: str


@dataclass
class ReadTally:
    """What reading found and skipped: never fatal, always counted.

    ``progress``, when set, is told how many more bytes were read, as reading goes.
    """

    formats: Counter[str] = field(default_factory=Counter)
    unknown_files: int = 0
    malformed: int = 0
    too_large: int = 0
    unreadable: int = 0
    bytes_read: int = 0
    progress: Callable[[int], None] | None = field(default=None, repr=False, compare=False)
    _skipped: list[Skipped] = field(default_factory=list, repr=False)
    _damaged: dict[Path, tuple[int, int]] = field(default_factory=dict, repr=False)

    def summary(self) -> str:
        found = ", ".join(f"{n} {fmt}" for fmt, n in sorted(self.formats.items())) or "none"
        return (
            f"files read: {found}; skipped: {self.unknown_files} unknown file(s), "
            f"{self.malformed} malformed line(s)/document(s), {self.too_large} too large, "
            f"{self.unreadable} unreadable"
        )

    def read_bytes(self, count: int) -> None:
        self.bytes_read += count
        if self.progress is not None:
            self.progress(count)

    def skip_unknown(self, path: Path, reason: str) -> None:
        self.unknown_files += 1
        self._note(path, reason)

    def skip_unreadable(self, path: Path, error: OSError) -> None:
        self.unreadable += 1
        self._note(path, f"cannot read: {error.strerror or error}")

    def skip_too_large(self, path: Path, limit_bytes: int) -> None:
        self.too_large += 1
        self._note(path, f"larger than LOOPFUSE_MAX_DOCUMENT_MB ({limit_bytes // 1024 // 1024} MB)")

    def skip_malformed(self, path: Path, reason: str) -> None:
        """A whole file (or one event file) that could not be used."""
        self.malformed += 1
        self._note(path, reason)

    def skip_damaged(self, path: Path, error: Exception) -> None:
        """A file whose content made its reader fail: counted as malformed, with the error."""
        self.skip_malformed(path, f"content its reader could not use ({type(error).__name__}: {error})"[:300])

    def malformed_line(self, path: Path, number: int) -> None:
        """One damaged line of a file whose other lines were read."""
        self.malformed += 1
        count, first = self._damaged.get(path, (0, number))
        if count or len(self._damaged) < SKIPPED_LIST_LIMIT:
            self._damaged[path] = (count + 1, first)

    @property
    def skipped_files(self) -> list[Skipped]:
        """The files skipped whole, with why (up to ``SKIPPED_LIST_LIMIT``)."""
        return list(self._skipped)

    @property
    def skipped(self) -> list[Skipped]:
        """Every file skipped, with why, then every file read with some lines skipped."""
        damaged = [
            Skipped(path, f"{count} malformed line(s) skipped, the first at line {first}")
            for path, (count, first) in self._damaged.items()
        ]
        return self._skipped + damaged

    @property
    def skipped_unlisted(self) -> int:
        """Skipped files counted but not listed (beyond ``SKIPPED_LIST_LIMIT``)."""
        listed = len(self._skipped)
        return self.unknown_files + self.unreadable + self.too_large + self._whole_malformed - listed

    def _note(self, path: Path, reason: str) -> None:
        if len(self._skipped) < SKIPPED_LIST_LIMIT:
            self._skipped.append(Skipped(path, reason))

    @property
    def _whole_malformed(self) -> int:
        return self.malformed - sum(count for count, _ in self._damaged.values())
