"""The stdio relay: JSON-RPC lines pass between client and backend untouched, except
``tools/call`` requests, which the guard checks first, and the answer to an allowed call that
carries a warning, which gets it as one more text content block. The protocol has no model
turn: calls are checked without ``round=``. Only standard library."""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Awaitable, Callable
from typing import Any

from ...guard import Guard
from ...incidents import logger
from .backend import CLOSE_GRACE, Backend, describe_status, exit_status
from .jsonrpc import (
    BACKEND_GONE,
    INTERNAL_ERROR,
    PARSE_ERROR,
    denial_result,
    error_line,
    input_required,
    is_message,
    next_round,
    parse_client_line,
    parse_line,
    recover_id,
    response_ok,
    tool_call,
    with_warning,
)
from .refusal import refusal_text
from .session import LISTING, PendingCall, Session
from .streams import LineReader, LineWriter, Oversized, read_line

__all__ = ["RELAY_FAILED", "StdioRelay"]

_NOT_PENDING = object()
SIGNAL_GRACE = 5.0
DRAIN_GRACE = 0.5
RELAY_FAILED = 70
"""The exit status when a relay task failed (EX_SOFTWARE): a bug in the proxy, never a hang."""
_UNREADABLE_ANSWER = (
    "loopfuse proxy: the MCP server's answer to this request could not be read "
    "(not JSON, nested too deeply, or longer than the line limit); it was dropped."
)


class StdioRelay:
    """One client in front of one backend process. The guard's agent is ``{agent}:{n}``,
    a new one for each ``initialize`` (see ``Session``)."""

    def __init__(
        self, guard: Guard, agent: str, backend: Backend, client_in: LineReader, client_out: LineWriter
    ) -> None:
        self.guard, self.session, self.backend = guard, Session(agent), backend
        self._in, self._out = client_in, client_out
        self._pending: dict[Any, object] = {}
        self._dead_text: str | None = None
        self._death_status: int | None = None
        self._signalled: int | None = None
        self._failure: str | None = None
        self._client_gone = False
        self._grace_spent = False
        self._finished = asyncio.Event()
        self.dropped = {"client": 0, "server": 0}

    async def run(self) -> int:
        """Relay until the client left and the backend's answers are out, a signal stopped
        the backend, or a relay task failed; the exit status."""
        self._install_signal_handlers()
        self._down = asyncio.create_task(self._guarded(self._backend_to_client, "server-to-client relay"))
        up = asyncio.create_task(self._guarded(self._client_to_backend, "client-to-server relay"))
        watch = asyncio.create_task(self._guarded(self._watch_backend, "server watch"))
        await self._finished.wait()
        for task in (up, self._down, watch):
            task.cancel()
        await asyncio.gather(up, self._down, watch, return_exceptions=True)
        self._report_drops()
        return await self._exit_status()

    async def _guarded(self, relay: Callable[[], Awaitable[None]], name: str) -> None:
        """Run one of the proxy's tasks; if it fails, say so and end the proxy (never a silent hang)."""
        try:
            await relay()
        except Exception as exc:  # any failure ends the proxy, loudly
            self._failure = f"loopfuse proxy: the {name} failed ({type(exc).__name__}); stopping."
            logger.error("%s", self._failure)
            self._finished.set()

    async def _watch_backend(self) -> None:
        """Once the backend exited, its children still holding its stdout go too, so that
        the relay sees the end of its output (after a moment to read its last lines)."""
        await self.backend.wait()
        await asyncio.wait({self._down}, timeout=DRAIN_GRACE)
        if not self._down.done():
            await self.backend.end_group()

    async def _exit_status(self) -> int:
        if self._signalled is not None:
            await self.backend.stop(SIGNAL_GRACE)
            return 128 + self._signalled
        await self.backend.close(0 if self._failure or self._grace_spent else CLOSE_GRACE)
        if self._failure is not None:
            return RELAY_FAILED
        if self._death_status is not None:
            return exit_status(self._death_status) or 1
        return 0

    def _drop(self, side: str, why: str) -> None:
        self.dropped[side] += 1
        if self.dropped[side] == 1:
            logger.warning(
                "loopfuse proxy: dropped a line from the %s: %s (later ones are counted)", side, why
            )

    def _report_drops(self) -> None:
        if any(self.dropped.values()):
            client, server = self.dropped["client"], self.dropped["server"]
            logger.warning("loopfuse proxy: dropped %d client lines and %d MCP server lines", client, server)

    # client -> backend

    async def _client_to_backend(self) -> None:
        try:
            while line := await read_line(self._in):
                await self._from_client(line)
        except OSError as exc:
            logger.warning(
                "loopfuse proxy: cannot read from the client: %s", exc.strerror or type(exc).__name__
            )
        self._client_left()

    def _client_left(self) -> None:
        """The client's input ended: the backend answers what is in flight, then exits."""
        self._client_gone = True
        if self._down.done():
            self._finished.set()
            return
        self.backend.close_stdin()
        asyncio.get_running_loop().call_later(CLOSE_GRACE, self._grace_over)

    def _grace_over(self) -> None:
        self._grace_spent = True
        self._finished.set()

    async def _oversized_request(self, head: Oversized) -> None:
        """Drop a client line over the limit, answering a parse error to its id when its first
        bytes name one."""
        self._drop("client", "longer than the line limit")
        request_id = recover_id(head)
        if request_id is not None:
            await self._to_client(error_line(request_id, PARSE_ERROR, "Parse error: the line is too long"))

    async def _from_client(self, line: bytes) -> None:
        if isinstance(line, Oversized):
            await self._oversized_request(line)
            return
        if not line.strip():
            return
        incoming = parse_client_line(line)
        message = incoming.message
        if message is None:
            if incoming.error is None:
                self._drop("client", "not JSON, and no id to answer the parse error to")
            else:
                await self._to_client(incoming.error)
            return
        if self._dead_text is not None:
            if incoming.method is not None and incoming.has_id:
                await self._to_client(error_line(message["id"], BACKEND_GONE, self._dead_text))
            return
        if await self._refused(message, incoming.method, incoming.has_id):
            return
        await self._to_backend(line)

    async def _refused(self, message: dict[str, Any], method: str | None, has_id: bool) -> bool:
        """Check a ``tools/call`` and answer a denial; note what the backend owes an answer to."""
        if method == "initialize":
            await self.guard.aforget(self.session.restart())
        call = tool_call(message) if method == "tools/call" else None
        pending: object = LISTING if method == "tools/list" else None
        if call is not None and next_round(message):  # checked at its first round
            pending = PendingCall(*call, self.session.agent)
        elif call is not None:
            text, pending = await self._judge(*call)
            if text is not None:
                if has_id:
                    await self._to_client(denial_result(message, text))
                return True
        if method == "notifications/cancelled":
            self._forget_cancelled(message)
        elif method is not None and has_id:
            self._remember(message["id"], pending)
        return False

    async def _judge(self, tool: str, args: Any) -> tuple[str | None, PendingCall]:
        """The refusal text (None: forward the call) and what its answer is awaited as. A tool
        the backend did not list is an invalid turn, and counts for no call breaker. Awaited: a
        guard on Redis waits for its store without holding back the backend's answers."""
        agent = self.session.agent
        listed = not self.session.unlisted(tool)
        warning = None
        try:
            if listed:
                decision = await self.guard.acheck(tool, args, agent)
            else:
                decision = await self.guard.anote_invalid(agent, reason="a tool the MCP server did not list")
            text, warning = refusal_text(decision, agent, self.guard), decision.warning
        except Exception:
            logger.exception("loopfuse proxy: the guard failed on %s; allowing it", tool)
            text = None
        return text, PendingCall(tool, args, agent, listed, warning)

    def _remember(self, request_id: Any, pending: object) -> None:
        with contextlib.suppress(TypeError):
            self._pending[request_id] = pending

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
            while line := await read_line(self.backend.stdout):
                await self._from_backend(line)
        except OSError as exc:
            logger.warning(
                "loopfuse proxy: cannot read from the MCP server: %s", exc.strerror or type(exc).__name__
            )
        await self._backend_ended()

    async def _from_backend(self, line: bytes) -> None:
        if isinstance(line, Oversized):
            await self._unreadable_answer(line, "longer than the line limit")
            return
        if not line.strip():
            return
        try:
            message = parse_line(line)
        except (ValueError, RecursionError):
            await self._unreadable_answer(line, "not JSON (or nested too deeply to read)")
            return
        if not is_message(message):
            self._drop("server", "not a JSON-RPC message")
            return
        await self._to_client(self._warned(message, line))
        if isinstance(message, dict):
            if message.get("method") == "notifications/tools/list_changed":
                self.session.tools_changed()
            elif self._pending:
                await self._settle(message)

    def _warned(self, message: Any, line: bytes) -> bytes:
        """``line``, or, when it answers a call that carries a warning, the answer with it."""
        if not self._pending or not isinstance(message, dict) or "method" in message:
            return line
        try:
            pending = self._pending.get(message.get("id"))
        except TypeError:
            return line
        if not isinstance(pending, PendingCall) or pending.warning is None:
            return line
        return with_warning(message, pending.warning) or line

    async def _unreadable_answer(self, line: bytes, why: str) -> None:
        """Drop a line that cannot be relayed; answer the request it answered, if it says which."""
        self._drop("server", why)
        request_id = recover_id(line)
        if request_id is not None and self._pending.pop(request_id, _NOT_PENDING) is not _NOT_PENDING:
            await self._to_client(error_line(request_id, INTERNAL_ERROR, _UNREADABLE_ANSWER))

    async def _settle(self, message: dict[str, Any]) -> None:
        """Read the answer to one of the client's requests: a tool call's result for the
        guard, a tool list for the session."""
        if "method" in message:
            return  # a request from the server, not an answer
        try:
            pending = self._pending.pop(message["id"], _NOT_PENDING)
        except (KeyError, TypeError):
            return
        if pending is LISTING:
            self.session.listed(message)
        elif isinstance(pending, PendingCall) and pending.agent == self.session.agent:
            await self._record(pending, message)

    async def _record(self, call: PendingCall, message: dict[str, Any]) -> None:
        if input_required(message):  # a round: the call's result comes at its last
            return
        ok = response_ok(message)
        if not call.listed:
            if ok:
                self.session.learn(call.tool)  # the backend has it after all
            return
        try:
            await self.guard.arecord_result(call.tool, call.args, message.get("result"), call.agent, ok=ok)
        except Exception:
            logger.exception("loopfuse proxy: record_result failed for %s", call.tool)

    async def _backend_ended(self) -> None:
        """The backend's output ended: unless a signal stopped it, or it exited 0 with nothing
        pending after the client left (the normal end), it died: say so and answer what is
        pending. The proxy ends with it once the client has left."""
        status = await self.backend.wait(2.0)
        if status is None:
            self.backend.signal(signal.SIGKILL)
            status = await self.backend.wait() or -signal.SIGKILL
        await self.backend.drain_stderr()
        if self._signalled is None and (status != 0 or self._pending or not self._client_gone):
            self._death_status = status
            self.backend.report_death(status)
            await self._fail_pending(status)
        if self._signalled is not None or self._client_gone:
            self._finished.set()

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
            self._client_gone = True
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
