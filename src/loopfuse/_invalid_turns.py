"""Invalid turns, the guard's part: ``note_invalid`` and ``anote_invalid``.

A turn in which the model produced no usable tool call is not a call: it never reaches the call
breakers. The store keeps each agent's streak of them; ``breakers.invalid`` judges it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .breakers.invalid import INVALID_TOOL, InvalidTurnBreaker
from .decision import Decision, Denial
from .stores.base import Outcome, Store, StoreUnavailableError

if TYPE_CHECKING:
    from ._stats import GuardStats
    from .listeners import GuardListener

__all__ = ["InvalidTurns"]


class InvalidTurns:
    """The invalid-turn methods of ``Guard`` (which provides what is declared here)."""

    _invalid: InvalidTurnBreaker | None
    _store: Store
    _shadow: bool
    _stats: GuardStats

    if TYPE_CHECKING:

        @property
        def listeners(self) -> list[GuardListener]: ...

        def _allowed(self, tool: Any) -> Decision: ...

        def _result_lost(self, tool: str, agent: Any, exc: StoreUnavailableError) -> None: ...

        def _unexpected(self, exc: Exception, tool: Any, agent: Any, *, checked: bool = True) -> Decision: ...

        def _fail_open(self, reason: str, tool: str, agent: Any, *, checked: bool = True) -> None: ...

        def _after_denial(self, decision: Decision, agent: Any, denial: Denial, outcome: Outcome) -> None: ...

        def _notify(self, hook: str, *args: Any) -> None: ...

    def note_invalid(self, agent: Any = "default", reason: str | None = None) -> Decision:
        """Report a turn in which the model produced no usable tool call (no call where one
        was expected, an unknown tool, arguments that do not parse).

        Allowed while the agent's invalid turns in a row stay under ``[invalid] limit``: give
        the model your own error text as usual. Denied from the limit on: give it
        ``Decision.message`` instead; ``Decision.escalate`` (``abort_after_denials`` denials in
        a row, as for tool calls) means stop the run. Any allowed tool call ends the streak. ``reason`` is for your own records: the
        guard keeps none of it. Never raises: a streak that cannot be counted is allowed.
        """
        if self._invalid is None:
            return self._allowed(INVALID_TOOL)
        try:
            return self._invalid_decision(agent, self._store.note_invalid(agent))
        except StoreUnavailableError as exc:
            self._result_lost(INVALID_TOOL, agent, exc)
        except Exception as exc:  # a caller's agent object raised where nothing else caught it
            self._unexpected(exc, INVALID_TOOL, agent, checked=False)
        return self._allowed(INVALID_TOOL)

    async def anote_invalid(self, agent: Any = "default", reason: str | None = None) -> Decision:
        """``note_invalid`` for async hosts (the Redis store never blocks the event loop)."""
        if self._invalid is None:
            return self._allowed(INVALID_TOOL)
        try:
            return self._invalid_decision(agent, await self._store.anote_invalid(agent))
        except StoreUnavailableError as exc:
            self._result_lost(INVALID_TOOL, agent, exc)
        except Exception as exc:  # a caller's agent object raised where nothing else caught it
            self._unexpected(exc, INVALID_TOOL, agent, checked=False)
        return self._allowed(INVALID_TOOL)

    def _invalid_decision(self, agent: Any, streak: int | None) -> Decision:
        breaker = self._invalid
        assert breaker is not None
        if streak is None:
            self._fail_open("agent_identity", INVALID_TOOL, agent, checked=False)
            return self._allowed(INVALID_TOOL)
        denied = breaker.denied(streak, self._shadow)
        if denied is None:
            return self._allowed(INVALID_TOOL)
        decision, outcome = denied
        self._stats.denial("invalid", decision.escalate)
        denial = outcome.denial
        assert denial is not None  # breaker.denied returns a denial's outcome
        self._after_denial(decision, agent, denial, outcome)
        if self.listeners:
            self._notify("on_check", decision, agent)
        return decision
