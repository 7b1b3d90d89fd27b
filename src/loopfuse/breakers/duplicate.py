"""The window breaker: the same call too often among the agent's recent calls."""

from __future__ import annotations

from collections.abc import Mapping

from ..calls import CallKey
from ..decision import Denial, Kind
from ..state import AgentState, ToolResult
from ..volatile import pair_key


class WindowBreaker:
    """Deny a call that already ran ``limit`` times among the last recorded calls.

    The window's length is the state's (``AgentState.window``); this breaker only reads
    and appends. With ``result_aware``, once results are reported, an entry counts as a
    repeat only if that call returned the same result as the call's latest one: the same
    call returning something new is progress. Entries whose result never arrived count as
    repeats, so a host that never reports results gets plain counting. ``progress_limit``
    (0 disables) still denies a call that ran that many times in a row, new results or not.
    """

    kind: Kind = "duplicate"

    def __init__(
        self,
        limit: int,
        *,
        result_aware: bool = False,
        progress_limit: int = 0,
        tool_limits: Mapping[str, int] | None = None,
    ) -> None:
        self.limit = limit
        self.result_aware = result_aware
        self.progress_limit = progress_limit
        self.tool_limits = dict(tool_limits or {})

    def check(self, state: AgentState, call: CallKey) -> Denial | None:
        limit = self.tool_limits.get(call.tool, self.limit)
        count = self.count(state, call.key)
        if count >= limit:
            return Denial("duplicate", count, limit)
        if self.progress_limit and state.run_key == call.key and state.run_len >= self.progress_limit:
            return Denial("duplicate", state.run_len, self.progress_limit)
        return None

    def count(self, state: AgentState, key: int) -> int:
        """How many entries of the window repeat ``key`` (and its latest result)."""
        window = state.window
        count = window.count(key)
        if self.result_aware:
            last = state.results.last.get(key)
            if last is not None:
                count += window.count(pair_key(key, last))
        return count

    def record(self, state: AgentState, call: CallKey) -> None:
        window = state.window
        window.push(call.key)
        if self.result_aware:
            state.results.pushed(call.key, window.pushed - 1)
        if state.run_key == call.key:
            state.run_len += 1
        else:
            state.run_key, state.run_len = call.key, 1

    def refused(self, state: AgentState, call: CallKey) -> None:
        """A refused call never enters the window."""

    def observe(self, state: AgentState, call: CallKey, result: ToolResult) -> None:
        """Re-key the call's entry by its result, so equal results count together."""
        if not self.result_aware:
            return
        index = state.results.take_pending(call.key)
        if index is not None:
            state.window.replace(index, pair_key(call.key, result.digest))
