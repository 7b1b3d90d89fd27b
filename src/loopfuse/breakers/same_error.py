"""The same-error breaker: one tool failing the same way again and again."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from .._calls import CallKey
from .._state import AgentState, ToolResult
from ..checks import check_bool, check_int
from ..decision import Denial, Kind
from ._rerun import is_note
from ._results_only import ResultsOnly
from ._scope import error_scope
from ._text import CHANGE, FIX
from ._warn import lowered

if TYPE_CHECKING:
    from ..config import GuardConfig

__all__ = ["SameErrorBreaker", "SameErrorConfig", "SameErrorState"]


class SameErrorState:
    """The breaker's slice of an agent's state: its run of errors (the tool, a shell tool's
    program, or a batch tool's identical call, and the error) and the run of the identical call
    within it."""

    __slots__ = ("call", "call_streak", "key", "streak", "tool")

    def __init__(self) -> None:
        self.tool: str | None = None
        self.key = self.streak = self.call = self.call_streak = 0


@dataclass(frozen=True)
class SameErrorConfig:
    """Section ``same_error``: a tool failing with the same error ``limit`` times in a row."""

    enabled: bool = True
    limit: int = 10
    identical_limit: int = 4
    warn_at: int = 0

    def __post_init__(self) -> None:
        check_int("same_error", "warn_at", self.warn_at, 0)
        check_bool("same_error", "enabled", self.enabled)
        check_int("same_error", "limit", self.limit, 1)
        check_int("same_error", "identical_limit", self.identical_limit, 0)


class SameErrorBreaker(ResultsOnly):
    """Deny a call to a tool whose last ``limit`` results in a row were the same error,
    whatever the arguments were, and the identical call once it failed with the same
    error ``identical_limit`` times in a row (0 disables that part).

    It needs results: ``record_result(..., ok=False)`` marks an error, identified by the
    tool and the error text with numbers, ids, timestamps and durations masked. Any result
    that is not an error (``ok`` true or unknown) ends the run of errors. For a tool in ``batch_tools``
    (one call per item) the run counts identical calls only: items failing alike add up to
    nothing.
    """

    kind: Kind = "same_error"
    section: ClassVar[str] = "same_error"
    config_type: ClassVar[type | None] = SameErrorConfig
    lua: ClassVar[str] = "fragment"  # stores/lua/breakers/same_error.lua
    MESSAGES: ClassVar[dict[str, str]] = {
        "same_error.limit": (
            "{tool} calls like this one failed with the same error {count} times in a row "
            "(same_error limit {limit}). "
            "Retrying will fail again. " + FIX
        ),
        "same_error.identical_limit": (
            "the identical call failed with the same error {count} times in a row "
            "(same_error identical_limit {limit}). " + CHANGE
        ),
    }

    def __init__(self, limit: int, identical_limit: int = 0, batch_tools: Iterable[str] = ()) -> None:
        self.limit = limit
        self.identical_limit = identical_limit
        self.batch_tools = frozenset(batch_tools)

    @classmethod
    def from_config(cls, config: GuardConfig) -> SameErrorBreaker | None:
        se = config.same_error
        if not se.enabled:
            return None
        return cls(se.limit, se.identical_limit, [t for t, rule in config.tools.items() if rule.batch])

    def check(self, state: AgentState, call: CallKey) -> Denial | None:
        run = state.units.get("same_error") if state.units else None
        if run is None or run.tool is None or error_scope(call) != run.tool or not self._same_run(run, call):
            return None
        if run.streak >= self.limit:
            return Denial("same_error", run.streak, self.limit, "same_error.limit")
        same = run.call == call.key and run.call_streak
        if self.identical_limit and same and run.call_streak >= self.identical_limit:
            return Denial("same_error", run.call_streak, self.identical_limit, "same_error.identical_limit")
        return None

    def _same_run(self, run: SameErrorState, call: CallKey) -> bool:
        """Whether ``call`` belongs to the agent's run of errors (of its tool; for a batch
        tool, of the identical call)."""
        return not self.batch_tools or call.tool not in self.batch_tools or call.key == run.call

    def observe(self, state: AgentState, call: CallKey, result: ToolResult) -> None:
        if is_note(call):  # a thought between failures leaves them in a row
            return
        run = state.unit("same_error", SameErrorState)
        if result.ok is not False:
            run.tool, run.key, run.streak, run.call, run.call_streak = None, 0, 0, 0, 0
            return
        scope = error_scope(call)
        if scope == run.tool and result.error == run.key and self._same_run(run, call):
            run.streak += 1
            run.call_streak = run.call_streak + 1 if call.key == run.call else 1
        else:
            run.tool, run.key, run.streak, run.call_streak = scope, result.error, 1, 1
        run.call = call.key

    def allowed_repeats(self) -> int | None:
        """Successful results never move it."""
        return None

    def warned(self, warn_at: int) -> SameErrorBreaker:
        """This breaker with its limits at most ``warn_at``: where it denies, the guard warns."""
        return lowered(self, ("limit", "identical_limit"), warn_at)

    def lua_settings(self) -> tuple[int, ...]:
        return (self.limit, self.identical_limit)

    def script_rule(self, code: str, tool: str) -> str:
        return "same_error.identical_limit" if code == "identical" else "same_error.limit"
