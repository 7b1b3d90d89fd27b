"""The backend MCP server as a stdio subprocess: start, stderr relay, signals, shutdown."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import os
import signal
import sys
from collections.abc import Mapping, Sequence

from .streams import LINE_LIMIT, Oversized, read_line

__all__ = ["Backend", "exit_status"]

STDERR_TAIL = 20
TAIL_LINE = 4096
"""The most bytes of each stderr line kept for the death report; the rest is cut, and said so."""
CLOSE_GRACE = 5.0
TERM_GRACE = 2.0
GROUP_POLL = 0.05
EXIT_POLL = 0.05
GROUP_POLLS = 20


class Backend:
    """One backend process. Its stderr is relayed to ours line by line as it comes,
    and its last lines are kept to repeat once it died."""

    def __init__(self, proc: asyncio.subprocess.Process, command: Sequence[str]) -> None:
        self.proc = proc
        self.name = os.path.basename(command[0])
        self.tail: collections.deque[str] = collections.deque(maxlen=STDERR_TAIL)
        self._stderr_task = asyncio.create_task(self._relay_stderr())

    @classmethod
    async def start(cls, command: Sequence[str], extra_env: Mapping[str, str]) -> Backend:
        """Start ``command`` with our environment plus ``extra_env``; raises OSError."""
        proc = await asyncio.create_subprocess_exec(
            *command,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env={**os.environ, **extra_env},
            limit=LINE_LIMIT,
            process_group=0,
        )
        return cls(proc, command)

    @property
    def stdout(self) -> asyncio.StreamReader:
        assert self.proc.stdout is not None
        return self.proc.stdout

    @property
    def stdin(self) -> asyncio.StreamWriter:
        assert self.proc.stdin is not None
        return self.proc.stdin

    async def _relay_stderr(self) -> None:
        assert self.proc.stderr is not None
        with contextlib.suppress(OSError):
            while raw := await read_line(self.proc.stderr):
                self._relay_stderr_line(
                    raw if not isinstance(raw, Oversized) else b"(a line over the limit)\n"
                )

    def _relay_stderr_line(self, raw: bytes) -> None:
        self.tail.append(_tail_line(raw))
        _write_stderr(raw)

    def signal(self, signum: int) -> bool:
        """Send ``signum`` to the backend's whole process group (its own children too);
        False when no process is left in it."""
        try:
            os.killpg(self.proc.pid, signum)
        except (ProcessLookupError, PermissionError):
            return False
        return True

    async def wait(self, timeout: float | None = None) -> int | None:
        """The exit status once the process ended (None if ``timeout`` passed first).
        Polled: asyncio's own ``wait`` also waits for the pipes, which a grandchild may hold."""
        loop = asyncio.get_running_loop()
        deadline = None if timeout is None else loop.time() + timeout
        while (status := self.proc.returncode) is None:
            if deadline is not None and loop.time() >= deadline:
                return None
            await asyncio.sleep(EXIT_POLL)
        return status

    async def drain_stderr(self, timeout: float = 2.0) -> None:
        """Wait until every stderr line was relayed (bounded: a grandchild may hold the pipe)."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(self._stderr_task), timeout)

    def close_stdin(self) -> None:
        """End the backend's input: a stdio server answers what it has and exits."""
        with contextlib.suppress(OSError, RuntimeError):
            if not self.stdin.is_closing():
                self.stdin.close()

    async def close(self, grace: float = CLOSE_GRACE) -> int:
        """The stdio shutdown: close its stdin, wait ``grace``, then SIGTERM, then SIGKILL;
        then whatever is left in its process group goes too. Its exit status."""
        self.close_stdin()
        return await self._end(((None, grace), (signal.SIGTERM, TERM_GRACE), (signal.SIGKILL, None)))

    async def stop(self, grace: float) -> int:
        """After a signal was passed on: wait ``grace``, then SIGKILL; then the group."""
        return await self._end(((None, grace), (signal.SIGKILL, None)))

    async def _end(self, steps: tuple[tuple[int | None, float | None], ...]) -> int:
        status: int | None = None
        for step, grace in steps:
            if step is not None:
                self.signal(step)
            status = await self.wait(grace)
            if status is not None:
                break
        await self.end_group()
        await self.drain_stderr()
        return status if status is not None else -signal.SIGKILL

    async def end_group(self) -> None:
        """The backend's children still in its process group: SIGTERM, then SIGKILL."""
        if not self.signal(signal.SIGTERM):
            return
        for _ in range(GROUP_POLLS):
            await asyncio.sleep(GROUP_POLL)
            if not self.signal(0):
                return
        self.signal(signal.SIGKILL)

    def report_death(self, status: int) -> None:
        """Write the exit status and the backend's last stderr lines to our stderr."""
        lines = [f"loopfuse proxy: MCP server {self.name!r} exited ({describe_status(status)})."]
        if self.tail:
            lines.append(f"loopfuse proxy: its last {len(self.tail)} stderr lines:")
            lines.extend(f"  | {line}" for line in self.tail)
        _write_stderr(("\n".join(lines) + "\n").encode("utf-8", "replace"))


def _tail_line(raw: bytes) -> str:
    """A stderr line as the death report repeats it: at most ``TAIL_LINE`` bytes of it."""
    line = raw.rstrip(b"\r\n")
    text = line[:TAIL_LINE].decode("utf-8", "replace")
    cut = len(line) - TAIL_LINE
    return text if cut <= 0 else f"{text}... ({cut} more bytes cut)"


def describe_status(status: int) -> str:
    if status < 0:
        try:
            return f"killed by {signal.Signals(-status).name}"
        except ValueError:
            return f"killed by signal {-status}"
    return f"status {status}"


def exit_status(status: int) -> int:
    """A process exit status for ``status`` as asyncio reports it (negative: a signal)."""
    return 128 - status if status < 0 else status


def _write_stderr(data: bytes) -> None:
    try:
        sys.stderr.buffer.write(data)
        sys.stderr.buffer.flush()
    except (OSError, ValueError):
        pass
