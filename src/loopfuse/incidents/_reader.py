"""Reading a JSON-lines file incrementally, as it grows, is rotated or is truncated."""

from __future__ import annotations

import errno
import json
import os
import stat
from collections.abc import Iterator
from typing import Any

__all__ = ["IncidentReader"]

_CHUNK = 1 << 20
_MAX_PARTIAL = 1 << 20
_TAIL = 4096  # bytes before the offset compared on each read to notice a rewrite in place
_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)


class IncidentReader:
    """Reads the lines appended to a JSON-lines file since the last call.

    Keeps the file open at an offset, so each ``read`` costs only what was appended.
    When the path is rotated (renamed or deleted and re-created) the rest of the old
    file is read first, then the new file from its start; when the file is truncated
    in place, reading restarts at its start, even when it has grown past the offset
    again (the last bytes read are compared with what the file now holds there).
    A last line without its newline is kept until the rest arrives. Lines that are not
    JSON objects are skipped and counted. A path that exists but is not a regular file
    that can be opened (a folder, a FIFO, a device, no permission) reads as empty, and
    is never opened in a way that blocks; ``error`` tells why.
    """

    def __init__(self, path: str | os.PathLike[str], *, from_start: bool = True) -> None:
        """``from_start=False`` skips what the file already holds; a file that does not
        exist yet is always read from its start once it appears."""
        self.path = os.fspath(path)
        self.skipped = 0
        self.error: OSError | None = None  # why the last try to open failed, unless it does not exist
        self._file: Any = None
        self._ino: tuple[int, int] | None = None
        self._partial = b""
        self._tail = b""  # the last bytes before the offset, as read
        self._open(at_end=not from_start)

    def read(self) -> list[dict[str, Any]]:
        """The complete records appended since the last call (at most a few MiB a call)."""
        return self._read_bounded()[0]

    def read_batches(self) -> Iterator[list[dict[str, Any]]]:
        """Everything appended since the last call, up to the end of the file, in batches
        of at most a few MiB each (so memory stays bounded however long the backlog)."""
        more = True
        while more:
            records, more = self._read_bounded()
            if records:
                yield records

    def _read_bounded(self) -> tuple[list[dict[str, Any]], bool]:
        """The next records (bounded), and whether more is left to read."""
        if self._file is None and not self._open(at_end=False):
            return [], False
        records, at_eof = self._drain()
        if at_eof and self._rotated():
            records += self._finish_partial()
            self.close()
            if self._open(at_end=False):
                fresh, at_eof = self._drain()
                records += fresh
        return records, not at_eof

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
        self._file, self._ino, self._partial, self._tail = None, None, b"", b""

    def __enter__(self) -> IncidentReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _open(self, *, at_end: bool) -> bool:
        try:
            fd = _open_regular(self.path)
        except FileNotFoundError:
            self.error = None  # not created yet (or rotated away): wait for it
            return False
        except OSError as exc:
            self.error = exc
            return False
        self.error = None
        self._file = os.fdopen(fd, "rb", buffering=0)  # unbuffered: each read sees the file as it is now
        st = os.fstat(fd)
        self._ino = (st.st_dev, st.st_ino)
        if at_end:
            self._file.seek(max(0, st.st_size - _TAIL))
            self._tail = self._file.read(min(st.st_size, _TAIL))
        return True

    def _rotated(self) -> bool:
        try:
            st = os.stat(self.path)
        except OSError:
            return False  # moved away and not re-created yet: keep reading the old file
        return (st.st_dev, st.st_ino) != self._ino

    def _drain(self) -> tuple[list[dict[str, Any]], bool]:
        """Records from the offset on (bounded), and whether the end of the file was reached."""
        if self._rewritten():
            self._file.seek(0)  # truncated in place (copytruncate), perhaps regrown since
            self._partial, self._tail = b"", b""
        chunk = self._file.read(_CHUNK)
        self._tail = (self._tail + chunk[-_TAIL:])[-_TAIL:]
        complete, _, self._partial = (self._partial + chunk).rpartition(b"\n")
        if len(self._partial) > _MAX_PARTIAL:
            self._partial, self.skipped = b"", self.skipped + 1
        records = self._parse(complete.split(b"\n")) if complete else []
        return records, len(chunk) < _CHUNK

    def _rewritten(self) -> bool:
        """Whether the file is now shorter than the offset, or holds other bytes just before
        it than were read there: one ``fstat`` and one small read, however long the file."""
        offset = self._file.tell()
        if os.fstat(self._file.fileno()).st_size < offset:
            return True
        if not self._tail:
            return False
        self._file.seek(offset - len(self._tail))
        return bool(self._file.read(len(self._tail)) != self._tail)

    def _finish_partial(self) -> list[dict[str, Any]]:
        rest, self._partial = self._partial, b""
        return self._parse([rest]) if rest else []

    def _parse(self, lines: list[bytes]) -> list[dict[str, Any]]:
        records = []
        for line in lines:
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except (ValueError, RecursionError):  # RecursionError: nested too deep to parse
                record = None
            if isinstance(record, dict):
                records.append(record)
            else:
                self.skipped += 1
        return records


def _open_regular(path: str) -> int:
    """A descriptor for reading ``path``, opened without blocking; OSError unless a regular file.

    ``stat`` first, so a FIFO is never opened (that would release a writer waiting to open it),
    then ``fstat`` on the descriptor in case the path was replaced in between."""
    _check_regular(path, os.stat(path).st_mode)
    fd = os.open(path, _FLAGS)
    try:
        _check_regular(path, os.fstat(fd).st_mode)
    except OSError:
        os.close(fd)
        raise
    return fd


def _check_regular(path: str, mode: int) -> None:
    if stat.S_ISDIR(mode):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), path)
    if not stat.S_ISREG(mode):
        raise OSError(errno.EINVAL, "not a regular file (a FIFO, socket or device)", path)
