"""The stdio relay: JSON-RPC lines pass between client and backend untouched, except
``tools/call`` requests, which the guard checks first. Only standard library."""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
from typing import Any

from ...guard import Guard
from ...incidents import logger
from .backend import Backend, describe_status, exit_status
from .jsonrpc import (
    BACKEND_GONE,
    denial_result,
    error_line,
    parse_client_line,
    response_ok,
    tool_call,
)
from .refusal import refusal_text
from .streams import LineReader, LineWriter

__all__ = ["StdioRelay"]

_NOT_PENDING = object()
SIGNAL_GRACE = 5.0


class StdioRelay:
    """One client session in front of one backend process; the guard's agent is ``agent``."""

    def __init__(
        self, guard: Guard, agent: str, backend: Backend, client_in: LineReader, client_out: LineWriter
    ) -> None:
        self.guard, self.agent, self.backend = guard, agent, backend
        self._in, self._out = client_in, client_out
        self._pending: dict[Any, tuple[str, dict[str, Any]] | None] = {}
        self._dead_text: str | None = None
        self._death_status: int | None = None
        self._signalled: int | None = None
        self._finished = asyncio.Event()

    async def run(self) -> int:
        """Relay until the client leaves or a signal stopped the backend; the exit status."""
        self._install_signal_handlers()
        up = asyncio.create_task(self._client_to_backend())
        down = asyncio.create_task(self._backend_to_client())
        await self._finished.wait()
        for task in (up, down):
            task.cancel()
        await asyncio.gather(up, down, return_exceptions=True)
        return await self._exit_status()

    async def _exit_status(self) -> int:
        if self._signalled is not None:
            await self._stop_after_signal()
            return 128 + self._signalled
        if self._death_status is not None:
            return exit_status(self._death_status) or 1
        await self.backend.close()
        await self.backend.drain_stderr()
        return 0

    # client -> backend

    async def _client_to_backend(self) -> None:
        try:
            while line := await self._in.readline():
                await self._from_client(line if line.endswith(b"\n") else line + b"\n")
        except (OSError, ValueError) as exc:
            logger.warning("loopfuse proxy: cannot read from the client: %s", exc)
        self._finished.set()

    async def _from_client(self, line: bytes) -> None:
        if not line.strip():
            return
        incoming = parse_client_line(line)
        if incoming.error is not None:
            await self._to_client(incoming.error)
            return
        message = incoming.message
        assert message is not None
        if self._dead_text is not None:
            if incoming.method is not None and incoming.has_id:
                await self._to_client(error_line(message["id"], BACKEND_GONE, self._dead_text))
            return
        if await self._refused(message, incoming.method, incoming.has_id):
            return
        await self._to_backend(line)

    async def _refused(self, message: dict[str, Any], method: str | None, has_id: bool) -> bool:
        """Check a ``tools/call`` and answer a denial; note what the backend owes an answer to."""
        call = tool_call(message) if method == "tools/call" else None
        if call is not None:
            text = self._check(*call)
            if text is not None:
                if has_id:
                    await self._to_client(denial_result(message, text))
                return True
        if method == "notifications/cancelled":
            self._forget_cancelled(message)
        elif method is not None and has_id:
            self._remember(message["id"], call)
        return False

    def _check(self, tool: str, args: dict[str, Any]) -> str | None:
        try:
            return refusal_text(self.guard.check(tool, args, self.agent), self.agent, self.guard)
        except Exception:
            logger.exception("loopfuse proxy: the guard failed on %s; allowing it", tool)
            return None

    def _remember(self, request_id: Any, call: tuple[str, dict[str, Any]] | None) -> None:
        with contextlib.suppress(TypeError):
            self._pending[request_id] = call

    def _forget_cancelled(self, message: dict[str, Any]) -> None:
        params = message.get("params")
        if isinstance(params, dict):
            with contextlib.suppress(TypeError):
                self._pending.pop(params.get("requestId"), None)

    async def _to_backend(self, line: bytes) -> None:
        try:
            self.backend.stdin.write(line)
            await self.backend.stdin.drain()
        except (ConnectionError, OSError, RuntimeError):
            pass  # the backend is gone; the reader of its stdout answers what is pending

    # backend -> client

    async def _backend_to_client(self) -> None:
        try:
            while line := await self.backend.stdout.readline():
                await self._from_backend(line if line.endswith(b"\n") else line + b"\n")
        except (OSError, ValueError) as exc:
            logger.warning("loopfuse proxy: cannot read from the MCP server: %s", exc)
        await self._backend_ended()

    async def _from_backend(self, line: bytes) -> None:
        head = line.lstrip()[:1]
        if head not in (b"{", b"["):
            if head:
                logger.warning("loopfuse proxy: dropped a non-JSON line the MCP server wrote on stdout")
            return
        await self._to_client(line)
        if self._pending:
            self._settle(line)

    def _settle(self, line: bytes) -> None:
        """Record the result of a response to one of the client's tool calls."""
        try:
            message = json.loads(line)
            call = self._pending.pop(message["id"], _NOT_PENDING)
        except (ValueError, KeyError, TypeError):
            return
        if isinstance(call, tuple) and "method" not in message:
            tool, args = call
            try:
                result = message.get("result")
                self.guard.record_result(tool, args, result, self.agent, ok=response_ok(message))
            except Exception:
                logger.exception("loopfuse proxy: record_result failed for %s", tool)

    async def _backend_ended(self) -> None:
        status = await self.backend.wait(2.0)
        if status is None:
            self.backend.signal(signal.SIGKILL)
            status = await self.backend.wait() or -signal.SIGKILL
        await self.backend.drain_stderr()
        if self._signalled is not None or self._finished.is_set():
            self._finished.set()
            return
        self._death_status = status
        self.backend.report_death(status)
        await self._fail_pending(status)

    async def _fail_pending(self, status: int) -> None:
        name, how = self.backend.name, describe_status(status)
        self._dead_text = (
            f"loopfuse proxy: the MCP server {name!r} has exited ({how}); its last stderr lines are "
            "in the client's log for this server. Restart the server to use its tools again."
        )
        pending, self._pending = self._pending, {}
        text = f"loopfuse proxy: the MCP server {name!r} exited ({how}) before answering this request."
        for request_id in pending:
            await self._to_client(error_line(request_id, BACKEND_GONE, text))

    async def _to_client(self, line: bytes) -> None:
        try:
            self._out.write(line)
            await self._out.drain()
        except (ConnectionError, OSError, RuntimeError):
            self._finished.set()

    # signals

    def _install_signal_handlers(self) -> None:
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError):  # not on POSIX
                loop.add_signal_handler(signum, self._on_signal, signum)

    def _on_signal(self, signum: int) -> None:
        self._signalled = signum
        self.backend.signal(signum)
        self._finished.set()

    async def _stop_after_signal(self) -> None:
        if await self.backend.wait(SIGNAL_GRACE) is None:
            self.backend.signal(signal.SIGKILL)
            await self.backend.wait()
        await self.backend.drain_stderr()
