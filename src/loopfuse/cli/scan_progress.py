"""The progress bar of ``loopfuse scan``: by bytes read, within each file as well as across
files, drawn on stderr only when it is a terminal."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

__all__ = ["Progress"]

_WIDTH = 30


class Progress:
    """Call ``start(path)`` before reading a file, ``read(n)`` as its bytes are read (the
    readers do, through ``ReadTally.progress``), ``finish()`` after it, ``close()`` at the end."""

    def __init__(self, paths: Sequence[Path], stream: TextIO) -> None:
        self._stream = stream
        self._on = stream is not None and stream.isatty()  # None: started with stderr closed
        self._total = _total_bytes(paths) if self._on else 0
        self._finished = 0  # bytes of the files read to the end
        self._size = 0  # the current file's size
        self._in_file = 0  # bytes of the current file read so far
        self._drawn = -1  # the last thousandth drawn

    def start(self, path: Path) -> None:
        self._size = _size(path) if self._on else 0
        self._in_file = 0

    def read(self, count: int) -> None:
        self._in_file += count
        self._draw(self._finished + min(self._in_file, self._size))

    def finish(self) -> None:
        self._finished += self._size
        self._size = self._in_file = 0
        self._draw(self._finished)

    def close(self) -> None:
        if self._on and self._drawn >= 0:
            self._stream.write("\r" + " " * 70 + "\r")
            self._stream.flush()

    def _draw(self, done: int) -> None:
        if not self._on:
            return
        share = min(done / self._total, 1.0) if self._total else 1.0
        thousandth = int(share * 1000)
        if thousandth == self._drawn:
            return
        self._drawn = thousandth
        bar = "#" * int(share * _WIDTH)
        self._stream.write(
            f"\rscanning [{bar:<{_WIDTH}}] {thousandth // 10:3d}%  {_mb(done)}/{_mb(self._total)} MB"
        )
        self._stream.flush()


def _mb(count: int) -> str:
    return f"{count / 1024 / 1024:.1f}"


def _size(path: Path) -> int:
    try:
        if path.is_dir():
            return sum(p.stat().st_size for p in path.iterdir() if p.is_file())
        return path.stat().st_size
    except OSError:
        return 0


def _total_bytes(paths: Sequence[Path]) -> int:
    total = 0
    for path in paths:
        if not path.is_dir():
            total += _size(path)
            continue
        for folder, _, files in os.walk(path):
            total += sum(_size(Path(folder) / f) for f in files)
    return total
