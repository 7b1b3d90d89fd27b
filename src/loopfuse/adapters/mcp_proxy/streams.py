"""Our own stdin and stdout as asyncio streams (pipes), with a thread fallback for files."""

from __future__ import annotations

import asyncio
import os
from typing import Any, Protocol

__all__ = ["LineReader", "LineWriter", "open_stdio"]

LINE_LIMIT = 1 << 30


class LineReader(Protocol):
    async def readline(self) -> bytes: ...


class LineWriter(Protocol):
    def write(self, data: bytes) -> None: ...

    async def drain(self) -> None: ...


async def open_stdio() -> tuple[LineReader, LineWriter]:
    """Readers and writers over duplicates of fds 0 and 1."""
    loop = asyncio.get_running_loop()
    source = open(os.dup(0), "rb", buffering=0)  # noqa: SIM115 - owned by the transport
    sink = open(os.dup(1), "wb", buffering=0)  # noqa: SIM115 - owned by the transport
    reader: LineReader
    writer: LineWriter
    try:
        stream = asyncio.StreamReader(limit=LINE_LIMIT)
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(stream), source)
        reader = stream
    except ValueError:
        reader = _ThreadReader(source)
    try:
        transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, sink)
        writer = asyncio.StreamWriter(transport, protocol, None, loop)
    except ValueError:
        writer = _BlockingWriter(sink)
    return reader, writer


class _ThreadReader:
    """Lines of a regular file (``loopfuse proxy < requests.jsonl``) read in a thread."""

    def __init__(self, source: Any) -> None:
        self._source = source

    async def readline(self) -> bytes:
        line: bytes = await asyncio.to_thread(self._source.readline)
        return line


class _BlockingWriter:
    """Writes to a regular file: plain blocking writes."""

    def __init__(self, sink: Any) -> None:
        self._sink = sink

    def write(self, data: bytes) -> None:
        self._sink.write(data)

    async def drain(self) -> None:
        self._sink.flush()
