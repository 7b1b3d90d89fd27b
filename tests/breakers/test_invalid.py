"""The invalid-turn breaker's rule on a streak, without a guard (on each store: tests/stores/test_invalid_turns.py)."""

from __future__ import annotations

import pytest

from loopfuse.breakers.invalid import InvalidTurnBreaker
from loopfuse.decision import Denial


@pytest.mark.parametrize(("streak", "denied"), [(0, False), (5, False), (6, True), (50, True)])
def test_breaker_judges_the_streak(streak: int, denied: bool) -> None:
    breaker = InvalidTurnBreaker(6)
    assert (breaker.judge(streak) == Denial("invalid", streak, 6, "invalid.limit")) is denied
    assert breaker.escalates(streak) is (streak >= 12)
