"""The backend MCP server as a stdio subprocess: start, stderr relay, signals, shutdown."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import os
import signal
import sys
from collections.abc import Mapping, Sequence

__all__ = ["Backend", "exit_status"]

STDERR_TAIL = 20
LINE_LIMIT = 1 << 30
CLOSE_GRACE = 5.0
TERM_GRACE = 2.0


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
        async for raw in self.proc.stderr:
            text = raw.decode("utf-8", "replace").rstrip("\r\n")
            self.tail.append(text)
            _write_stderr(raw if raw.endswith(b"\n") else raw + b"\n")

    def signal(self, signum: int) -> None:
        """Pass ``signum`` on to the backend, if it still runs."""
        if self.proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                self.proc.send_signal(signum)

    async def wait(self, timeout: float | None = None) -> int | None:
        """The exit status once the process ended (None if ``timeout`` passed first)."""
        try:
            return await asyncio.wait_for(self.proc.wait(), timeout)
        except TimeoutError:
            return None

    async def drain_stderr(self, timeout: float = 2.0) -> None:
        """Wait until every stderr line was relayed (bounded: a grandchild may hold the pipe)."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(self._stderr_task), timeout)

    async def close(self) -> int:
        """The stdio shutdown: close its stdin, then SIGTERM, then SIGKILL; its exit status."""
        if self.proc.returncode is None:
            self.stdin.close()
        for step, grace in ((None, CLOSE_GRACE), (signal.SIGTERM, TERM_GRACE), (signal.SIGKILL, None)):
            if step is not None:
                self.signal(step)
            status = await self.wait(grace)
            if status is not None:
                return status
        return self.proc.returncode or 0  # pragma: no cover - SIGKILL always ends it

    def report_death(self, status: int) -> None:
        """Write the exit status and the backend's last stderr lines to our stderr."""
        lines = [f"loopfuse proxy: MCP server {self.name!r} exited ({describe_status(status)})."]
        if self.tail:
            lines.append(f"loopfuse proxy: its last {len(self.tail)} stderr lines:")
            lines.extend(f"  | {line}" for line in self.tail)
        _write_stderr(("\n".join(lines) + "\n").encode("utf-8", "replace"))


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
