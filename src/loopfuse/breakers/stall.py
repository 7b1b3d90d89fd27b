"""The stall breaker: the same call giving the same outcome again, with nothing new in between.

Honest work repeats calls too: a test re-run after each edit, a search after new findings.
What tells a loop apart is that nothing new came back between the repeats. This breaker
counts, per call and outcome (the result, or for a failure the error with numbers, ids,
timestamps and durations masked), how many times that pair came back *with no new outcome in between*,
new meaning one the agent has not seen among its last ``window`` results. A thinking or
no-op step, or a trivial variant of the call that fails the same way, brings nothing new,
so it does not reset the count; a new result anywhere does.

Calls equal but for ids, numbers and timestamps (the same near-duplicate key) that fail with
the identical error, numbers kept, are the same failure too: a fresh ``request_id`` in every
call, or the same edit sent at line 120, then 121, rejected alike. Those count per near key
against ``error_limit`` (when near-duplicate keys are computed: ``near_duplicate`` on). Errors
that name their item ("order 1001 not found", "order 1002 not found") stay apart.

The result that completes such a streak also refuses the agent's next call, whatever it is:
an agent that got the same outcome ``limit`` times is stuck, and its next move is most often
a trivial variant or a no-op that would let it go round once more (the published rule of
OpenHands stops the agent after 4 identical action-and-observation pairs). That refusal is
one call only: the call after it is judged as usual.

A successful call of an edit tool (``edit_tools``) that was not made lately is something new
whatever it answers: a tool that writes a file and answers "File updated." changed the code the
next test run tests, as much as one that answers with the changed lines.

A tool that keeps failing the same way with nothing new in between is stuck too, whatever
its arguments: the same class looked up in one file after another, each answer "could not
find class X". ``tool_error_limit`` counts those per tool (for a batch tool, per identical
call, as ``same_error`` does), by the whole error: numbers kept, as each item's own.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from .._calls import CallKey
from .._state import AgentState, RecentDigests, ToolResult
from .._volatile import pair_key
from ..checks import check_bool, check_int, check_names, check_window
from ..decision import Denial, Kind
from ._rerun import DEFAULT_EDIT_TOOLS, is_edit, is_note
from ._results_only import ResultsOnly
from ._scope import error_scope
from ._text import CHANGE, FIX
from ._warn import lowered

if TYPE_CHECKING:
    from ..config import GuardConfig

__all__ = ["DEFAULT_EDIT_TOOLS", "StallBreaker", "StallConfig", "StallState"]


_COUNT, _FAILED = 0xFFFF, 1 << 16  # a pair's entry: novelty stamp << 17 | failed | count
_MASK63 = (1 << 63) - 1


@dataclass(frozen=True)
class StallConfig:
    """Section ``stall``: deny a call whose latest outcome already came back ``limit`` times
    (``error_limit`` when it was a failure), and a call to a tool that failed the same way
    ``tool_error_limit`` times, with nothing new in between (0 disables a part)."""

    enabled: bool = True
    limit: int = 8
    error_limit: int = 4
    tool_error_limit: int = 12
    window: int = 32
    warn_at: int = 0
    edit_tools: tuple[str, ...] = DEFAULT_EDIT_TOOLS

    def __post_init__(self) -> None:
        object.__setattr__(self, "edit_tools", check_names("stall", "edit_tools", self.edit_tools))
        check_int("stall", "warn_at", self.warn_at, 0)
        check_bool("stall", "enabled", self.enabled)
        check_int("stall", "limit", self.limit, 0)
        check_int("stall", "error_limit", self.error_limit, 0)
        check_int("stall", "tool_error_limit", self.tool_error_limit, 0)
        check_window("stall", "window", self.window, 2)


class StallState:
    """The breaker's slice of one agent's state, made at its first result: how many new
    outcomes it has seen (``novel``), the outcomes seen lately, the latest outcome of each
    recent call and, per recent call and outcome, its count and the ``novel`` of its last
    occurrence; and the latest result's count, with the agent's calls made and denied in a
    row when it came (its next call is the one it refuses); and the same, per tool, for its
    failures, and per near key (made at its first failure with one). Each table keeps what its
    last ``window`` updates wrote."""

    __slots__ = (
        "last", "latest", "near", "near_top", "novel", "pairs", "seen", "tool_last", "tool_novel", "tool_pairs",
    )  # fmt: skip

    def __init__(self, window: int) -> None:
        self.novel = 0
        self.tool_last, self.tool_pairs = RecentDigests(window), RecentDigests(window)
        self.tool_novel = -1  # ``novel`` at the latest failure counted per tool
        # The latest result's streak: (calls, denials in a row, count, failed) when it came.
        self.latest: tuple[int, int, int, bool] | None = None
        self.seen, self.last, self.pairs = RecentDigests(window), RecentDigests(window), RecentDigests(window)
        self.near: tuple[RecentDigests, RecentDigests] | None = None  # latest errors, pairs
        self.near_top = (0, 0)  # (novel, the highest near count since it): below the limit, no check


class StallBreaker(ResultsOnly):
    """Deny a call whose latest outcome came back ``limit`` (failures: ``error_limit``)
    times with no new outcome between them. Needs results; without them it never denies."""

    kind: Kind = "stall"
    section: ClassVar[str] = "stall"
    config_type: ClassVar[type | None] = StallConfig
    lua: ClassVar[str] = "fragment"  # stores/lua/breakers/stall.lua
    MESSAGES: ClassVar[dict[str, str]] = {
        "stall.limit": (
            "the identical call already returned the same result {count} times with nothing new "
            "in between (stall limit {limit}), so running it again will not tell you anything new. " + CHANGE
        ),
        "stall.error_limit": (
            "the identical call already failed the same way {count} times with nothing new in "
            "between (stall error_limit {limit}). Retrying will fail again. " + FIX
        ),
        "stall.after_limit": (
            "the previous call returned the same result {count} times with nothing new in between "
            "(stall limit {limit}), so this agent is stuck and this next call is refused too. " + CHANGE
        ),
        "stall.after_error_limit": (
            "the previous call failed the same way {count} times with nothing new in between "
            "(stall error_limit {limit}), so this agent is stuck and this next call is refused too. "
            "Do not retry a variant of it. " + FIX
        ),
        "stall.similar_error_limit": (
            "calls equal to this one but for ids, numbers and timestamps already failed with the identical "
            "error {count} times with nothing new in between (stall error_limit {limit}). Changing only such "
            "values will not help. " + FIX
        ),
        "stall.tool_error_limit": (
            "{tool} calls like this one already failed the same way {count} times with nothing new in "
            "between, whatever their arguments (stall tool_error_limit {limit}). Other arguments will "
            "not help. " + FIX
        ),
    }

    def __init__(
        self,
        limit: int,
        error_limit: int,
        window: int = 32,
        *,
        tool_error_limit: int = 12,
        batch_tools: Iterable[str] = (),
        edit_tools: Iterable[str] = DEFAULT_EDIT_TOOLS,
    ) -> None:
        self.limit, self.error_limit, self.window = limit, error_limit, window
        self.tool_error_limit = tool_error_limit
        self.batch_tools = frozenset(batch_tools)
        self.edit_tools = frozenset(edit_tools)

    @classmethod
    def from_config(cls, config: GuardConfig) -> StallBreaker | None:
        st = config.section("stall")
        if not st.enabled or not (st.limit or st.error_limit or st.tool_error_limit):
            return None
        batch = [t for t, rule in config.tools.items() if rule.batch]
        return cls(
            st.limit,
            st.error_limit,
            st.window,
            tool_error_limit=st.tool_error_limit,
            batch_tools=batch,
            edit_tools=st.edit_tools,
        )

    def check(self, state: AgentState, call: CallKey) -> Denial | None:
        mine = state.units.get("stall") if state.units else None
        if mine is None:
            return None
        return (
            self._repeated(mine, call)
            or self._similar_failing(mine, call)
            or self._tool_failing(mine, call)
            or self._next_after_stall(mine, state)
        )

    def _repeated(self, mine: StallState, call: CallKey) -> Denial | None:
        entry = _current(mine.last, mine.pairs, call.key, mine.novel)
        if entry is None:
            return None
        count, failed = entry & _COUNT, entry & _FAILED
        limit = self.error_limit if failed else self.limit
        if limit and count >= limit:
            return Denial("stall", count, limit, "stall.error_limit" if failed else "stall.limit")
        return None

    def _similar_failing(self, mine: StallState, call: CallKey) -> Denial | None:
        novel, top = mine.near_top
        if novel != mine.novel or top < self.error_limit or mine.near is None:
            return None  # no near key's count reached the limit since the latest new outcome
        near = call.near
        count = _reached(*mine.near, near, mine.novel, self.error_limit) if near else None
        return Denial("stall", count, self.error_limit, "stall.similar_error_limit") if count else None

    def _tool_failing(self, mine: StallState, call: CallKey) -> Denial | None:
        if not self.tool_error_limit or mine.tool_novel != mine.novel:
            return None  # no failure since the latest new outcome: every tool's count is stale
        tool = self._tool_key(call)
        count = _reached(mine.tool_last, mine.tool_pairs, tool, mine.novel, self.tool_error_limit)
        return Denial("stall", count, self.tool_error_limit, "stall.tool_error_limit") if count else None

    def _tool_key(self, call: CallKey) -> int:
        """What a tool's failures are counted by: the tool (a shell tool's, per program), or for a
        batch tool the identical call."""
        return call.key if call.tool in self.batch_tools else (hash(error_scope(call)) & _MASK63) or 1

    def _next_after_stall(self, mine: StallState, state: AgentState) -> Denial | None:
        """The agent's first call after the result that completed a streak (none made or denied since)."""
        latest = mine.latest
        if latest is None or latest[0] != state.calls or latest[1] != state.denials_in_row:
            return None
        count, failed = latest[2], latest[3]
        limit = self.error_limit if failed else self.limit
        if limit and count >= limit:
            return Denial("stall", count, limit, "stall.after_error_limit" if failed else "stall.after_limit")
        return None

    def observe(self, state: AgentState, call: CallKey, result: ToolResult) -> None:
        mine = state.unit("stall", lambda: StallState(self.window))
        failed = result.ok is False
        outcome = (result.error if failed else result.digest) or 1
        if (mine.seen.get(outcome) is None and not is_note(call)) or (
            not failed and self._new_edit(mine, call)
        ):
            mine.novel += 1
        mine.seen.put(outcome, 1)
        count = _counted(mine.last, mine.pairs, call.key, outcome, mine.novel, _FAILED if failed else 0)
        if failed and self.error_limit:
            count = max(count, self._similar_counted(mine, call, result.digest or 1))
        mine.latest = (state.calls, state.denials_in_row, count, failed)
        if failed and self.tool_error_limit:
            # By the whole error, numbers kept: "order 3 not found" and "order 4 not found" differ.
            _counted(mine.tool_last, mine.tool_pairs, self._tool_key(call), result.digest or 1, mine.novel, 0)
            mine.tool_novel = mine.novel

    def _new_edit(self, mine: StallState, call: CallKey) -> bool:
        """A call of an edit tool not made lately: it changed something, whatever it answered."""
        return is_edit(call, self.edit_tools) and mine.last.get(call.key) is None

    def _similar_counted(self, mine: StallState, call: CallKey, error: int) -> int:
        """The failure once more for the call's near key: how many times in a row, nothing new between."""
        near = call.near
        if not near:
            return 0
        if mine.near is None:
            mine.near = RecentDigests(self.window), RecentDigests(self.window)
        count = _counted(*mine.near, near, error, mine.novel, 0)
        novel, top = mine.near_top
        mine.near_top = (mine.novel, max(count, top) if novel == mine.novel else count)
        return count

    def allowed_repeats(self) -> int | None:
        """How many identical calls, each with the same successful result, it allows."""
        return self.limit or None

    def warned(self, warn_at: int) -> StallBreaker:
        """This breaker with its limits at most ``warn_at``: where it denies, the guard warns."""
        return lowered(self, ("limit", "error_limit", "tool_error_limit"), warn_at)

    def lua_settings(self) -> tuple[int, ...]:
        return (self.limit, self.error_limit, self.window, self.tool_error_limit)

    def script_rule(self, code: str, tool: str) -> str:
        return _SCRIPT_RULES.get(code, "stall.limit")


def _current(last: RecentDigests, pairs: RecentDigests, key: int, novel: int) -> int | None:
    """The entry of ``key``'s latest outcome when nothing new came since it, else None."""
    outcome = last.get(key)
    entry = pairs.get(pair_key(key, outcome)) if outcome is not None else None
    return entry if entry is not None and entry >> 17 == novel else None


def _reached(last: RecentDigests, pairs: RecentDigests, key: int, novel: int, limit: int) -> int | None:
    """The count of ``key``'s latest outcome, nothing new since it, when it is at ``limit`` or more."""
    entry = _current(last, pairs, key, novel)
    return entry & _COUNT if entry is not None and entry & _COUNT >= limit else None


def _counted(
    last: RecentDigests, pairs: RecentDigests, key: int, outcome: int, novel: int, flags: int
) -> int:
    """``key`` gave ``outcome`` once more: how many times in a row with nothing new in between."""
    pair = pair_key(key, outcome)
    entry = pairs.get(pair)
    count = min((entry & _COUNT) + 1, _COUNT) if entry is not None and entry >> 17 == novel else 1
    pairs.put(pair, novel << 17 | flags | count)
    last.put(key, outcome)
    return count


_SCRIPT_RULES = {
    "error": "stall.error_limit",
    "after": "stall.after_limit",
    "after_error": "stall.after_error_limit",
    "tool": "stall.tool_error_limit",
    "similar": "stall.similar_error_limit",
}
