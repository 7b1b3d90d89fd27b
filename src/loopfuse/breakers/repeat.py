"""The loop brake: the same call too many times in a row."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from .._calls import CallKey
from .._state import AgentState, ToolResult
from ..decision import Denial, Kind
from ._text import CHANGE
from ._warn import lowered

if TYPE_CHECKING:
    from ..config import GuardConfig

__all__ = ["RepeatBreaker", "RepeatState"]


class RepeatState:
    """The loop brake's slice of an agent's state: its streak of one call (the call's full
    digest), refused attempts included, the streak without a new result, the last result."""

    __slots__ = ("digest", "result", "stale", "streak")

    def __init__(self) -> None:
        self.digest, self.streak, self.stale, self.result = b"", 0, 0, 0


class RepeatBreaker:
    """Deny the identical call once it has run ``max_repeats`` times in a row.

    The streak counts refused attempts too, so ``count`` tells how many times in a row
    the model has asked; a different allowed call starts a new streak at 1. With
    ``result_aware``, a reported result that differs from the streak's previous one
    starts the streak again at 1 (the same call returning something new is progress).
    """

    kind: Kind = "repeat"
    section: ClassVar[str] = "loop_brake"
    config_type: ClassVar[type | None] = None  # LoopBrakeConfig (config.py: it has no default section)
    lua: ClassVar[str] = "fragment"  # stores/lua/breakers/repeat.lua
    MESSAGES: ClassVar[dict[str, str]] = {
        "loop_brake.max_repeats": "you asked for the identical call {count} times in a row (max_repeats {limit}). "
        + CHANGE,
    }

    def __init__(self, max_repeats: int, *, result_aware: bool = False) -> None:
        self.max_repeats = max_repeats
        self.result_aware = result_aware

    @classmethod
    def from_config(cls, config: GuardConfig) -> RepeatBreaker | None:
        brake = config.loop_brake
        if brake is None or not brake.enabled or brake.max_repeats is None:
            return None
        return cls(brake.max_repeats, result_aware=brake.result_aware)

    def check(self, state: AgentState, call: CallKey) -> Denial | None:
        mine = state.units.get("repeat") if state.units else None
        if mine is None or call.full != mine.digest:
            return None
        streak = mine.stale if self.result_aware else mine.streak
        if streak >= self.max_repeats:
            return Denial("repeat", streak + 1, self.max_repeats, "loop_brake.max_repeats")
        return None

    def record(self, state: AgentState, call: CallKey) -> None:
        mine = state.unit("repeat", RepeatState)
        if call.full == mine.digest:
            mine.streak += 1
            mine.stale += 1
        else:
            mine.digest, mine.streak, mine.stale, mine.result = call.full, 1, 1, 0

    def refused(self, state: AgentState, call: CallKey) -> None:
        mine = state.unit("repeat", RepeatState)
        mine.streak += 1
        mine.stale += 1

    def observe(self, state: AgentState, call: CallKey, result: ToolResult) -> None:
        mine = state.units.get("repeat") if state.units else None
        if mine is None or call.full != mine.digest:
            return
        if mine.result and result.digest != mine.result:
            mine.stale = 1
        mine.result = result.digest

    def allowed_repeats(self) -> int | None:
        """How many identical calls, each with the same successful result, it allows."""
        return self.max_repeats

    def warned(self, warn_at: int) -> RepeatBreaker:
        """This breaker with its limits at most ``warn_at``: where it denies, the guard warns."""
        return lowered(self, ("max_repeats",), warn_at)

    def lua_settings(self) -> tuple[int, ...]:
        return (self.max_repeats, int(self.result_aware))

    def script_rule(self, code: str, tool: str) -> str:
        return "loop_brake.max_repeats"
