"""The failures breaker: call after call failing, whatever the calls are.

An agent whose last ``limit`` calls all failed, each a different call or not, has learned
nothing it can use for that long: the same class looked up in one file after another, phrases
searched that cannot match code, a tool that is down. Healthy work fails in bursts too (a
rejected edit reworded until it passes, a reproduction that fails until it is fixed), but a
success ends each burst within a few calls.

Like a classic circuit breaker it opens on consecutive failures and then lets one trial call
through: the call right after the ``limit``-th failure in a row is refused; the call after that
refusal runs, and if it fails too, the next one is refused again. Once ``trials`` trial calls
have failed it stays open: every call is refused, so the denials come in a row and escalation
(``abort_after_denials``) stops the run. Any result that is not a failure (``ok`` true or
unknown) closes it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from .._calls import CallKey
from .._state import AgentState, ToolResult
from ..checks import check_bool, check_int
from ..decision import Denial, Kind
from ._results_only import ResultsOnly
from ._warn import lowered

if TYPE_CHECKING:
    from ..config import GuardConfig

__all__ = ["FailuresBreaker", "FailuresConfig", "FailuresState"]


class FailuresState:
    """The breaker's slice of an agent's state: its failures in a row, how many of them were
    trial calls (made while it was open) and when the latest came (the agent's calls made and
    denied in a row at that moment)."""

    __slots__ = ("at", "streak", "trials")

    def __init__(self) -> None:
        self.streak = 0
        self.trials = 0
        self.at: tuple[int, int] | None = None


@dataclass(frozen=True)
class FailuresConfig:
    """Section ``failures``: ``limit`` results in a row all failures, whatever the calls; after
    that, ``trials`` trial calls (one after each refusal) before every call is refused."""

    enabled: bool = True
    limit: int = 15
    trials: int = 2
    warn_at: int = 0

    def __post_init__(self) -> None:
        check_bool("failures", "enabled", self.enabled)
        check_int("failures", "limit", self.limit, 1)
        check_int("failures", "trials", self.trials, 0)
        check_int("failures", "warn_at", self.warn_at, 0)


class FailuresBreaker(ResultsOnly):
    """Refuse the call right after the ``limit``-th failure in a row (any tool, any call), then
    every other call while ``trials`` trial calls fail too, then every call.

    It needs results: ``record_result(..., ok=False)`` marks a failure; any other result
    ends the run of failures.
    """

    kind: Kind = "failures"
    section: ClassVar[str] = "failures"
    config_type: ClassVar[type | None] = FailuresConfig
    lua: ClassVar[str] = "fragment"  # stores/lua/breakers/failures.lua
    MESSAGES: ClassVar[dict[str, str]] = {
        "failures.limit": (
            "your last {count} tool calls all failed, with nothing succeeding in between "
            "(failures limit {limit}). Trying more calls the same way will fail too: stop, "
            "check your assumptions, or report to the user what is blocking you."
        ),
    }

    def __init__(self, limit: int, trials: int = 2) -> None:
        self.limit, self.trials = limit, trials

    @classmethod
    def from_config(cls, config: GuardConfig) -> FailuresBreaker | None:
        section = config.section("failures")
        return cls(section.limit, section.trials) if section.enabled else None

    def check(self, state: AgentState, call: CallKey) -> Denial | None:
        mine = state.units.get("failures") if state.units else None
        if mine is None or mine.streak < self.limit:
            return None
        if mine.at != (state.calls, state.denials_in_row) and mine.trials < self.trials:
            return None  # a call was made or refused since the latest failure: this one is a trial
        return Denial("failures", mine.streak, self.limit, "failures.limit")

    def observe(self, state: AgentState, call: CallKey, result: ToolResult) -> None:
        mine = state.unit("failures", FailuresState)
        if result.ok is False:
            if mine.streak >= self.limit:
                mine.trials = min(mine.trials + 1, 0xFFFF)
            mine.streak = min(mine.streak + 1, 0xFFFF)
            mine.at = (state.calls, state.denials_in_row)
        else:
            mine.streak, mine.trials, mine.at = 0, 0, None

    def allowed_repeats(self) -> int | None:
        """Successful results never move it."""
        return None

    def warned(self, warn_at: int) -> FailuresBreaker:
        """This breaker with its limit at most ``warn_at``: where it denies, the guard warns."""
        return lowered(self, ("limit",), warn_at)

    def lua_settings(self) -> tuple[int, ...]:
        return (self.limit, self.trials)

    def script_rule(self, code: str, tool: str) -> str:
        return "failures.limit"
