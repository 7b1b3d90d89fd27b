"""Results, the guard's part: ``record_result`` and ``arecord_result``.

A host reports what an allowed call returned; the guard finds the call it belongs to (the key
its check computed, kept by ``AwaitedCalls``), digests the result (never keeping it) and hands
both to the store, where the breakers observe it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._awaited import AwaitedCalls
from ._calls import CallKey
from ._rounds import Rounds
from ._state import ToolResult
from ._untrusted import BAD_TOOL, error_text, is_exception, tool_name, tool_result
from .stores.base import Store, StoreUnavailableError

if TYPE_CHECKING:
    from .decision import Decision

__all__ = ["ResultReporting"]


class ResultReporting:
    """The result methods of ``Guard`` (which provides what is declared here)."""

    _store: Store
    _awaited: AwaitedCalls
    _rounds: Rounds

    if TYPE_CHECKING:

        def _call_key(self, tool: Any, args: Any, agent: Any, *, count: bool = True) -> CallKey | None: ...

        def _result_lost(self, tool: str, agent: Any, exc: StoreUnavailableError) -> None: ...

        def _unexpected(self, exc: Exception, tool: Any, agent: Any, *, checked: bool = True) -> Decision: ...

        def _fail_open(self, reason: str, tool: str, agent: Any, *, checked: bool = True) -> None: ...

    def record_result(
        self,
        tool: str,
        args: Any = None,
        result: Any = None,
        agent: Any = "default",
        *,
        ok: bool | None = None,
        error: Any = None,
    ) -> None:
        """Tell the guard what a call that ran returned (``ok=False`` for an error).

        ``error``, when given, is what the call failed with (an exception or its text):
        the same as ``result=error, ok=False``; an exception as ``result`` is an error too,
        judged by its type and message. Breakers that opt in treat the same call
        returning a new result as progress. Only a digest of the result is kept, never
        the result. Never raises: a result that cannot be judged is ignored (fail open).
        """
        try:
            prepared = self._prepared_result(tool, args, result, agent, ok, error)
            if prepared is not None:
                self._observed(prepared[0].tool, agent, self._store.record_result(agent, *prepared))
        except Exception as exc:
            self._result_failed(exc, tool, agent)

    async def arecord_result(
        self,
        tool: str,
        args: Any = None,
        result: Any = None,
        agent: Any = "default",
        *,
        ok: bool | None = None,
        error: Any = None,
    ) -> None:
        """``record_result`` for async hosts: on Redis the result waits for the agent's next
        ``acheck`` (no round trip of its own), so the event loop is never blocked. Never raises."""
        try:
            prepared = self._prepared_result(tool, args, result, agent, ok, error)
            if prepared is not None:
                self._observed(prepared[0].tool, agent, await self._store.arecord_result(agent, *prepared))
        except Exception as exc:
            self._result_failed(exc, tool, agent)

    def _result_failed(self, exc: Exception, tool: Any, agent: Any) -> None:
        """A result the store could not take (an outage), or a caller's object that raised."""
        if isinstance(exc, StoreUnavailableError):
            self._result_lost(tool_name(tool) or BAD_TOOL, agent, exc)
        else:
            self._unexpected(exc, tool, agent, checked=False)

    def _prepared_result(
        self, tool: Any, args: Any, result: Any, agent: Any, ok: bool | None, error: Any
    ) -> tuple[CallKey, ToolResult] | None:
        """The call a result belongs to and the result's digests; None when there is nothing
        to record (an unguarded call) or the result cannot be read (counted as fail-open)."""
        if error is not None:
            result, ok = error, False
        if is_exception(result):
            result, ok = error_text(result), False if ok is None else ok
        call = self._awaited.take(tool, args) or self._call_key(tool, args, agent, count=False)
        if call is None:
            return None
        outcome = tool_result(result, ok)
        if outcome is None:
            self._fail_open("result", call.tool, agent, checked=False)
            return None
        self._rounds.observed(agent, call.key, outcome.digest)
        return call, outcome

    def _observed(self, tool: str, agent: Any, kept: bool) -> None:
        if kept is False:  # the agent cannot be keyed
            self._fail_open("result", tool, agent, checked=False)
