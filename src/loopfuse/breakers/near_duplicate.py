"""The near-duplicate breaker: calls equal once volatile values are masked."""

from __future__ import annotations

from collections.abc import Mapping

from ..calls import CallKey
from ..decision import Denial, Kind
from ..state import AgentState, CountingWindow, ResultBook, ToolResult
from ..volatile import pair_key


class NearDuplicateBreaker:
    """Deny a call whose near-duplicate key (``CallKey.near``: arguments with numbers, ids,
    timestamps, cursors and volatile keys masked, computed by the guard per tool) already
    occurred ``limit`` times among the agent's last ``window`` calls.

    Counting is the window breaker's, on its own window: with ``result_aware``, an entry
    counts only if it returned the same result as the key's latest reported one. With
    ``only_with_results``, entries without a reported result do not count at all.
    """

    kind: Kind = "near_duplicate"

    def __init__(
        self,
        limit: int,
        window: int,
        *,
        result_aware: bool = True,
        only_with_results: bool = False,
        tool_limits: Mapping[str, int] | None = None,
    ) -> None:
        self.limit = limit
        self.window = window
        self.result_aware = result_aware
        self.only_with_results = only_with_results
        self.tool_limits = dict(tool_limits or {})

    def check(self, state: AgentState, call: CallKey) -> Denial | None:
        if state.near is None or state.near_results is None or not call.near:
            return None
        count = 0 if self.only_with_results else state.near.count(call.near)
        last = state.near_results.last.get(call.near) if self.result_aware else None
        if last is not None:
            count += state.near.count(pair_key(call.near, last))
        limit = self.tool_limits.get(call.tool, self.limit)
        return Denial("near_duplicate", count, limit, self.rule(call.tool)) if count >= limit else None

    def rule(self, tool: str) -> str:
        """The key of the limit a ``tool`` call is compared with."""
        return "tools.near_duplicate_limit" if tool in self.tool_limits else "near_duplicate.limit"

    def record(self, state: AgentState, call: CallKey) -> None:
        if self.only_with_results and not state.reporting:
            return  # nothing could count yet: skip the masking until results arrive
        if not call.near:
            return
        if state.near is None or state.near_results is None:
            state.near, state.near_results = CountingWindow(self.window), ResultBook(self.window)
        state.near.push(call.near)
        if self.result_aware or self.only_with_results:
            state.near_results.pushed(call.near, state.near.pushed - 1)

    def refused(self, state: AgentState, call: CallKey) -> None:
        """A refused call never enters the window."""

    def observe(self, state: AgentState, call: CallKey, result: ToolResult) -> None:
        book = state.near_results
        if state.near is None or book is None or not call.near:
            return
        index = book.take_pending(call.near)
        if index is not None:
            state.near.replace(index, pair_key(call.near, result.digest))
        book.remember(call.near, result.digest)
