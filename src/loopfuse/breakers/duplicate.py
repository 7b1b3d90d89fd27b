"""The window breaker: the same call too often among the agent's recent calls."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, ClassVar

from .._calls import CallKey
from .._state import AgentState, ToolResult
from .._volatile import pair_key
from ..decision import Denial, Kind
from ._rerun import DEFAULT_EDIT_TOOLS, is_edit, is_note, settle
from ._text import CHANGE, NEW
from ._warn import lowered

if TYPE_CHECKING:
    from ..config import GuardConfig

__all__ = ["WindowBreaker", "WindowRun"]


class WindowRun:
    """The window breaker's slice of an agent's state beyond the shared window: the run of
    one call in a row, its length, its results the same in a row, its last result; and
    ``edited``, the window index of the newest successful edit or call new to the window."""

    __slots__ = ("edited", "key", "length", "result", "stale")

    def __init__(self) -> None:
        self.key = self.length = self.stale = self.result = 0
        self.edited = -1


class WindowBreaker:
    """Deny a call that already ran ``limit`` times among the last recorded calls.

    The window's length is the state's (``AgentState.window``); this breaker only reads
    and appends. With ``result_aware``, once results are reported, an entry counts as a
    repeat only if that call returned the same result as the call's latest one: the same
    call returning something new is progress. Entries whose result never arrived count as
    repeats, so a host that never reports results gets plain counting.

    A successful re-run after something new is not a repeat: when a call succeeds (``ok`` true)
    with a result it already returned within the window, and since that earlier run a call of
    one of ``edit_tools`` new to the window succeeded, or a call the agent had not made lately
    (a test re-run after an edit, a search re-run after a new finding), its entry is re-keyed so
    that no limit counts it (``_rerun``).

    With results, three more rules apply (each 0 disables it): ``result_limit`` replaces
    ``limit`` for a call whose latest result is known; ``same_result_limit`` denies a call
    that returned the same result that many times in a row; ``progress_limit`` denies a call
    that ran that many times in a row, new results or not. None of them applies to a call
    whose result was never reported, so a host that never reports results gets exactly the
    plain window rule.
    """

    kind: Kind = "duplicate"
    section: ClassVar[str] = "circuit_breaker"
    config_type: ClassVar[type | None] = (
        None  # CircuitBreakerConfig (config.py: it holds guard-wide keys too)
    )
    lua: ClassVar[str] = "fragment"  # stores/lua/breakers/duplicate.lua
    MESSAGES: ClassVar[dict[str, str]] = {
        "circuit_breaker.duplicate_limit": (
            "the identical call already ran {count} times among the last {window} calls "
            "(duplicate_limit {limit}), so " + NEW + CHANGE
        ),
        "circuit_breaker.result_limit": (
            "the identical call already ran {count} times among the last {window} calls without a new "
            "result (result_limit {limit}), so " + NEW + CHANGE
        ),
        "tools.duplicate_limit": (
            "the identical call already ran {count} times among the last {window} calls "
            "(duplicate_limit {limit} for {tool}), so " + NEW + CHANGE
        ),
        "circuit_breaker.same_result_limit": (
            "the identical call returned the same result {count} times in a row "
            "(same_result_limit {limit}), so " + NEW + CHANGE
        ),
        "circuit_breaker.progress_limit": (
            "the identical call ran {count} times in a row (progress_limit {limit}), new results or not. "
            + CHANGE
        ),
    }

    def __init__(
        self,
        limit: int,
        *,
        result_aware: bool = False,
        result_limit: int = 0,
        same_result_limit: int = 0,
        progress_limit: int = 0,
        tool_limits: Mapping[str, int] | None = None,
        edit_tools: Iterable[str] = DEFAULT_EDIT_TOOLS,
    ) -> None:
        self.limit = limit
        self.edit_tools = frozenset(edit_tools)
        self.result_aware = result_aware
        self.result_limit = result_limit
        self.same_result_limit = same_result_limit
        self.progress_limit = progress_limit
        self.tool_limits = dict(tool_limits or {})

    @classmethod
    def from_config(cls, config: GuardConfig) -> WindowBreaker | None:
        cb = config.circuit_breaker
        if not (cb.enabled and cb.duplicate_enabled):
            return None
        limits = {t: r.duplicate_limit for t, r in config.tools.items() if r.duplicate_limit is not None}
        return cls(
            cb.duplicate_limit,
            result_aware=cb.result_aware,
            result_limit=cb.result_limit or 0,
            same_result_limit=cb.same_result_limit,
            progress_limit=cb.progress_limit or 0,
            tool_limits=limits,
            edit_tools=config.section("stall").edit_tools,
        )

    def check(self, state: AgentState, call: CallKey) -> Denial | None:
        limit = self.tool_limits.get(call.tool, self.limit)
        last = state.results.last.get(call.key) if self.result_aware and state.results.reporting else None
        if last is not None and self.result_limit and call.tool not in self.tool_limits:
            limit = self.result_limit
        count = state.window.count(call.key)
        if last is not None:
            count += state.window.count(pair_key(call.key, last))
        if count >= limit:
            return Denial("duplicate", count, limit, self.count_rule(call.tool, last is not None))
        run = state.units.get("duplicate") if last is not None and state.units else None
        if run is None or run.key != call.key:
            return None
        return self._in_a_row(run)

    def _in_a_row(self, run: WindowRun) -> Denial | None:
        if self.same_result_limit and run.stale >= self.same_result_limit:
            return Denial("duplicate", run.stale, self.same_result_limit, "circuit_breaker.same_result_limit")
        if self.progress_limit and run.length >= self.progress_limit:
            return Denial("duplicate", run.length, self.progress_limit, "circuit_breaker.progress_limit")
        return None

    def count_rule(self, tool: str, result_known: bool) -> str:
        """The key of the limit the window count of a ``tool`` call is compared with."""
        if tool in self.tool_limits:
            return "tools.duplicate_limit"
        if result_known and self.result_limit:
            return "circuit_breaker.result_limit"
        return "circuit_breaker.duplicate_limit"

    def record(self, state: AgentState, call: CallKey) -> None:
        state.window.push(call.key)
        run = state.units.get("duplicate") if state.units else None
        if run is None:  # made here once, not through unit(): a call on every check
            run = state.unit("duplicate", WindowRun)
        if run.key == call.key:
            run.length += 1
        elif not state.results.reporting or not is_note(call):  # a thought leaves them in a row
            run.key, run.length, run.stale, run.result = call.key, 1, 0, 0

    def refused(self, state: AgentState, call: CallKey) -> None:
        """A refused call never enters the window."""

    def observe(self, state: AgentState, call: CallKey, result: ToolResult) -> None:
        """Re-key the call's entry by its result, so equal results count together (a
        successful re-run after an edit by a key no limit counts)."""
        if not self.result_aware:
            return
        run = state.unit("duplicate", WindowRun)
        pair, edit = pair_key(call.key, result.digest), is_edit(call, self.edit_tools)
        fresh = (
            result.ok is True
            and not edit
            and not is_note(call)
            and state.results.found(call.key, result.digest)
        )
        run.edited = settle(state.window, run.edited, state.results.index, pair, result.ok, edit, fresh)
        if call.key == run.key:
            run.stale = run.stale + 1 if result.digest == run.result else 1
            run.result = result.digest

    def allowed_repeats(self) -> int | None:
        """How many identical calls, each with the same successful result, it allows."""
        if not self.result_aware:
            return self.limit
        return min(
            n for n in (self.result_limit or self.limit, self.same_result_limit, self.progress_limit) if n
        )

    def warned(self, warn_at: int) -> WindowBreaker:
        """This breaker with its limits at most ``warn_at``: where it denies, the guard warns."""
        return lowered(self, ("limit", "result_limit", "same_result_limit", "progress_limit"), warn_at)

    def lua_settings(self) -> tuple[int, ...]:
        return (int(self.result_aware), self.same_result_limit, self.progress_limit)

    def script_rule(self, code: str, tool: str) -> str:
        """The key of a denial the Redis script tells by ``code``."""
        named = {
            "same_result": "circuit_breaker.same_result_limit",
            "progress": "circuit_breaker.progress_limit",
        }
        return named.get(code) or self.count_rule(tool, code == "result")
