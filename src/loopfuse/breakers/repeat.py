"""The loop brake: the same call too many times in a row."""

from __future__ import annotations

from ..calls import CallKey
from ..decision import Denial, Kind
from ..state import AgentState


class RepeatBreaker:
    """Deny the identical call once it has run ``max_repeats`` times in a row.

    The streak counts refused attempts too, so ``count`` tells how many times in a row
    the model has asked; a different allowed call starts a new streak at 1.
    """

    kind: Kind = "repeat"

    def __init__(self, max_repeats: int) -> None:
        self.max_repeats = max_repeats

    def check(self, state: AgentState, call: CallKey) -> Denial | None:
        if call.full == state.streak_digest and state.streak >= self.max_repeats:
            return Denial("repeat", state.streak + 1, self.max_repeats)
        return None

    def record(self, state: AgentState, call: CallKey) -> None:
        if call.full == state.streak_digest:
            state.streak += 1
        else:
            state.streak_digest = call.full
            state.streak = 1

    def refused(self, state: AgentState, call: CallKey) -> None:
        state.streak += 1
