"""Line streams: our own stdin and stdout (pipes, or files and devices through a thread),
and ``read_line``, which bounds a line's length without losing the stream."""

from __future__ import annotations

import asyncio
import contextlib
import os
import stat
import threading
from typing import Any, Protocol

__all__ = ["LINE_LIMIT", "OVERSIZED", "LineReader", "LineWriter", "Oversized", "open_stdio", "read_line"]

LINE_LIMIT = 64 << 20
"""The longest line relayed (64 MiB); a longer one is dropped and counted, the stream goes on."""
OVERSIZED_HEAD = 64 << 10  # bytes of an oversized line kept: where its id usually is


class Oversized(bytes):
    """What ``read_line`` returns in place of a line longer than ``LINE_LIMIT``: the line's
    first ``OVERSIZED_HEAD`` bytes (the rest is read past), so that an answer can name its id."""


OVERSIZED = Oversized()
"""An oversized line whose first bytes are not known."""
_QUEUE_CHUNKS = 16


class LineReader(Protocol):
    async def readuntil(self, separator: bytes = b"\n") -> bytes: ...

    async def readexactly(self, n: int) -> bytes: ...


class LineWriter(Protocol):
    def write(self, data: bytes) -> None: ...

    async def drain(self) -> None: ...


async def read_line(reader: LineReader) -> bytes:
    """The next line (with its newline, added if the stream ended without one); b"" at the end.

    A line over ``LINE_LIMIT`` is read past and an ``Oversized`` holding its first bytes
    returned instead.
    """
    try:
        return await reader.readuntil(b"\n")
    except asyncio.IncompleteReadError as exc:
        return exc.partial + b"\n" if exc.partial else b""
    except asyncio.LimitOverrunError as exc:
        head = Oversized((await reader.readexactly(exc.consumed))[:OVERSIZED_HEAD])
    while True:  # skip the rest of the oversized line
        try:
            await reader.readuntil(b"\n")
            return head
        except asyncio.IncompleteReadError:
            return head
        except asyncio.LimitOverrunError as exc:
            await reader.readexactly(exc.consumed)


def _is_pipe(fd: int) -> bool:
    """Whether asyncio can watch ``fd`` (a pipe or socket; not a file, /dev/null or a tty)."""
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


async def open_stdio() -> tuple[LineReader, LineWriter]:
    """Readers and writers over duplicates of fds 0 and 1."""
    loop = asyncio.get_running_loop()
    source = open(os.dup(0), "rb", buffering=0)  # noqa: SIM115 - owned by the transport
    sink = open(os.dup(1), "wb", buffering=0)  # noqa: SIM115 - owned by the transport
    reader = asyncio.StreamReader(limit=LINE_LIMIT)
    writer: LineWriter
    if _is_pipe(source.fileno()):
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), source)
    else:
        _start_reader_thread(source, reader, loop)
    if _is_pipe(sink.fileno()):
        transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, sink)
        writer = asyncio.StreamWriter(transport, protocol, None, loop)
    else:
        writer = _BlockingWriter(sink)
    return reader, writer


def _start_reader_thread(source: Any, reader: asyncio.StreamReader, loop: asyncio.AbstractEventLoop) -> None:
    """Feed ``reader`` from a file or device (``loopfuse proxy < requests.jsonl``) in a daemon
    thread, so that it never holds up the exit; the reader's own flow control bounds it."""
    flow = _ThreadFlow()
    reader.set_transport(flow)  # type: ignore[arg-type]

    def feed(data: bytes) -> None:
        reader.feed_data(data)
        flow.room.release()

    def pump() -> None:
        try:
            while flow.go.wait() and (data := source.read(1 << 16)):
                flow.room.acquire()
                loop.call_soon_threadsafe(feed, data)
        except (OSError, ValueError, RuntimeError):
            pass
        with contextlib.suppress(RuntimeError):  # a closed loop: nobody reads any more
            loop.call_soon_threadsafe(reader.feed_eof)

    threading.Thread(target=pump, name="loopfuse-proxy-stdin", daemon=True).start()


class _ThreadFlow:
    """The "transport" a thread-fed reader pauses and resumes: at most a few chunks in flight."""

    def __init__(self) -> None:
        self.go = threading.Event()
        self.go.set()
        self.room = threading.Semaphore(_QUEUE_CHUNKS)

    def pause_reading(self) -> None:
        self.go.clear()

    def resume_reading(self) -> None:
        self.go.set()


class _BlockingWriter:
    """Writes to a regular file or device: plain blocking writes."""

    def __init__(self, sink: Any) -> None:
        self._sink = sink

    def write(self, data: bytes) -> None:
        self._sink.write(data)

    async def drain(self) -> None:
        self._sink.flush()
