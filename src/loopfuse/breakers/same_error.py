"""The same-error breaker: one tool failing the same way again and again."""

from __future__ import annotations

from collections.abc import Iterable

from ..calls import CallKey
from ..decision import Denial, Kind
from ..state import AgentState, ToolResult


class SameErrorBreaker:
    """Deny a call to a tool whose last ``limit`` results in a row were the same error,
    whatever the arguments were, and the identical call once it failed with the same
    error ``identical_limit`` times in a row (0 disables that part).

    It needs results: ``record_result(..., ok=False)`` marks an error, identified by the
    tool and the error text with numbers, ids and timestamps masked. Any result that is not
    an error (``ok`` true or unknown) ends the run of errors. For a tool in ``batch_tools``
    (one call per item) the run counts identical calls only: items failing alike add up to
    nothing.
    """

    records = False  # record() does nothing: the store skips it
    kind: Kind = "same_error"

    def __init__(self, limit: int, identical_limit: int = 0, batch_tools: Iterable[str] = ()) -> None:
        self.limit = limit
        self.identical_limit = identical_limit
        self.batch_tools = frozenset(batch_tools)

    def check(self, state: AgentState, call: CallKey) -> Denial | None:
        if call.tool != state.error_tool or not self._same_run(state, call):
            return None
        if state.error_streak >= self.limit:
            return Denial("same_error", state.error_streak, self.limit, "same_error.limit")
        same = state.error_call == call.key and state.error_call_streak
        if self.identical_limit and same and state.error_call_streak >= self.identical_limit:
            return Denial(
                "same_error", state.error_call_streak, self.identical_limit, "same_error.identical_limit"
            )
        return None

    def _same_run(self, state: AgentState, call: CallKey) -> bool:
        """Whether ``call`` belongs to the agent's run of errors (of its tool; for a batch
        tool, of the identical call)."""
        return not self.batch_tools or call.tool not in self.batch_tools or call.key == state.error_call

    def record(self, state: AgentState, call: CallKey) -> None:
        """Only results move this breaker."""

    def refused(self, state: AgentState, call: CallKey) -> None:
        """A refused call changes nothing."""

    def observe(self, state: AgentState, call: CallKey, result: ToolResult) -> None:
        if result.ok is not False:
            state.error_tool, state.error_key, state.error_streak = None, 0, 0
            state.error_call, state.error_call_streak = 0, 0
            return
        if call.tool == state.error_tool and result.error == state.error_key and self._same_run(state, call):
            state.error_streak += 1
            same = call.key == state.error_call
            state.error_call_streak = state.error_call_streak + 1 if same else 1
        else:
            state.error_tool, state.error_key, state.error_streak = call.tool, result.error, 1
            state.error_call_streak = 1
        state.error_call = call.key
