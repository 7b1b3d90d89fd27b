"""The near-duplicate breaker: calls equal once volatile values are masked."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from .._calls import CallKey
from .._state import AgentState, CountingWindow, ResultBook, ToolResult
from .._volatile import pair_key
from ..checks import check_bool, check_int, check_masks, check_names, check_window, fail
from ..decision import Denial, Kind
from ._rerun import DEFAULT_EDIT_TOOLS, is_edit, is_note, settle
from ._text import CHANGE
from ._warn import lowered

if TYPE_CHECKING:
    from ..config import GuardConfig

__all__ = [
    "DEFAULT_MASKS",
    "DEFAULT_VOLATILE_KEYS",
    "NearDuplicateBreaker",
    "NearDuplicateConfig",
    "NearState",
]

DEFAULT_MASKS = ("uuids", "timestamps", "temp_names", "hex_ids", "cursors", "numbers")
DEFAULT_VOLATILE_KEYS = (
    "cursor", "page_token", "next_token", "offset", "request_id", "timestamp", "nonce", "seed",
    "trace_id", "span_id", "correlation_id", "tool_call_id",
)  # fmt: skip


class NearState:
    """The breaker's slice of an agent's state: its own window of near-duplicate keys and
    their latest results, and the index of its newest successful edit or call new to it."""

    __slots__ = ("book", "edited", "window")

    def __init__(self, size: int) -> None:
        self.window, self.book = CountingWindow(size), ResultBook(size)
        self.edited = -1


_DEFAULT_WINDOW = 50
_SIMILAR = "a call equal to this one except for ids, timestamps and similar changing values ran "


@dataclass(frozen=True)
class NearDuplicateConfig:
    """Section ``near_duplicate``: calls equal once volatile values are masked."""

    enabled: bool = True
    limit: int = 8
    window: int = _DEFAULT_WINDOW
    masks: tuple[str, ...] = DEFAULT_MASKS
    volatile_keys: tuple[str, ...] = DEFAULT_VOLATILE_KEYS
    result_aware: bool = True
    only_with_results: bool = True
    warn_at: int = 0

    def __post_init__(self) -> None:
        s = "near_duplicate"
        check_int(s, "warn_at", self.warn_at, 0)
        for key in ("enabled", "result_aware", "only_with_results"):
            check_bool(s, key, getattr(self, key))
        check_int(s, "limit", self.limit, 1)
        check_window(s, "window", self.window, 1)
        self._check_window()
        object.__setattr__(self, "masks", check_masks(s, "masks", self.masks))
        object.__setattr__(self, "volatile_keys", check_names(s, "volatile_keys", self.volatile_keys))

    def _check_window(self) -> None:
        """``limit`` at most ``window``: the error names the window when it was changed from
        its default, else the limit (the key the file wrote)."""
        if self.window >= self.limit:
            return
        if self.window != _DEFAULT_WINDOW:
            raise fail("near_duplicate", "window", self.window, f"at least limit ({self.limit})")
        raise fail("near_duplicate", "limit", self.limit, f"at most window ({self.window})")


class NearDuplicateBreaker:
    """Deny a call whose near-duplicate key (``CallKey.near``: arguments with numbers, ids,
    timestamps, cursors and volatile keys masked, but the values of keys naming an item kept,
    computed by the guard per tool) already occurred ``limit`` times among the agent's last
    ``window`` calls.

    Counting is the window breaker's, on its own window: with ``result_aware``, an entry
    counts only if it returned the same result as the key's latest reported one. With
    ``only_with_results``, entries without a reported result do not count at all.
    """

    kind: Kind = "near_duplicate"
    section: ClassVar[str] = "near_duplicate"
    config_type: ClassVar[type | None] = NearDuplicateConfig
    lua: ClassVar[str] = "fragment"  # stores/lua/breakers/near_duplicate.lua
    MESSAGES: ClassVar[dict[str, str]] = {
        "near_duplicate.limit": (
            _SIMILAR
            + "{count} times among the last {near_window} calls (near_duplicate limit {limit}). "
            + CHANGE
        ),
        "tools.near_duplicate_limit": (
            _SIMILAR + "{count} times among the last {near_window} calls (near_duplicate_limit {limit} for "
            "{tool}). " + CHANGE
        ),
    }

    def __init__(
        self,
        limit: int,
        window: int,
        *,
        result_aware: bool = True,
        only_with_results: bool = False,
        tool_limits: Mapping[str, int] | None = None,
        edit_tools: Iterable[str] = DEFAULT_EDIT_TOOLS,
    ) -> None:
        self.limit = limit
        self.window = window
        self.result_aware = result_aware
        self.only_with_results = only_with_results
        self.tool_limits = dict(tool_limits or {})
        self.edit_tools = frozenset(edit_tools)

    @property
    def awaits_results(self) -> bool:
        """With ``only_with_results`` nothing happens before the agent's first result."""
        return self.only_with_results

    @classmethod
    def from_config(cls, config: GuardConfig) -> NearDuplicateBreaker | None:
        nd = config.near_duplicate
        if not nd.enabled:
            return None
        limits = {t: r.near_duplicate_limit for t, r in config.tools.items() if r.near_duplicate_limit}
        flags = {"result_aware": nd.result_aware, "only_with_results": nd.only_with_results}
        edits = config.section("stall").edit_tools
        return cls(nd.limit, nd.window, tool_limits=limits, edit_tools=edits, **flags)

    def check(self, state: AgentState, call: CallKey) -> Denial | None:
        mine = state.units.get("near_duplicate") if state.units else None
        if mine is None:
            return None
        near = call.near  # read once: a property, computed on first use
        if not near:
            return None
        count = 0 if self.only_with_results else mine.window.count(near)
        last = mine.book.last.get(near) if self.result_aware else None
        if last is not None:
            count += mine.window.count(pair_key(near, last))
        limit = self.tool_limits.get(call.tool, self.limit)
        return Denial("near_duplicate", count, limit, self.rule(call.tool)) if count >= limit else None

    def rule(self, tool: str) -> str:
        """The key of the limit a ``tool`` call is compared with."""
        return "tools.near_duplicate_limit" if tool in self.tool_limits else "near_duplicate.limit"

    def record(self, state: AgentState, call: CallKey) -> None:
        if self.only_with_results and not state.results.reporting:
            return  # nothing could count yet: skip the masking until results arrive
        near = call.near
        if not near:
            return
        mine = state.units.get("near_duplicate") if state.units else None
        if mine is None:  # made here once, not through unit(): a call and a lambda on every check
            mine = state.unit("near_duplicate", lambda: NearState(self.window))
        mine.window.push(near)
        if self.result_aware or self.only_with_results:
            mine.book.pushed(near, mine.window.pushed - 1)

    def refused(self, state: AgentState, call: CallKey) -> None:
        """A refused call never enters the window."""

    def observe(self, state: AgentState, call: CallKey, result: ToolResult) -> None:
        mine = state.units.get("near_duplicate") if state.units else None
        if mine is None:
            return
        near = call.near
        if not near:
            return
        index = mine.book.take_pending(near)
        if index is not None:
            pair, edit = pair_key(near, result.digest), is_edit(call, self.edit_tools)
            fresh = result.ok is True and not edit and not is_note(call) and not mine.book.last.holds(near)
            fresh = fresh and result.digest not in state.results.recent
            mine.edited = settle(mine.window, mine.edited, index, pair, result.ok, edit, fresh)
        mine.book.remember(near, result.digest)

    def allowed_repeats(self) -> int | None:
        """How many identical calls, each with the same successful result, it allows (counted
        from the first result on when it only counts calls with results)."""
        if not self.result_aware and self.only_with_results:
            return None
        return self.limit + self.only_with_results

    def warned(self, warn_at: int) -> NearDuplicateBreaker:
        """This breaker with its limits at most ``warn_at``: where it denies, the guard warns."""
        return lowered(self, ("limit",), warn_at)

    def lua_settings(self) -> tuple[int, ...]:
        return (self.window, int(self.result_aware), int(self.only_with_results))

    def script_rule(self, code: str, tool: str) -> str:
        return self.rule(tool)
