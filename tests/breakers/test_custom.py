"""Your own breakers cannot switch the guard off: what is not a breaker is refused when the
guard is built, and a breaker that raises allows the call while the configured ones judge it."""

from __future__ import annotations

from typing import Any

import pytest

from loopfuse import ConfigError, Guard
from loopfuse._calls import CallKey
from loopfuse._state import AgentState, ToolResult

from .test_registry import Budget

SEARCH = {"q": "the same"}


class Raising(Budget):
    """A breaker that raises in the op named ``op``."""

    def __init__(self, op: str) -> None:
        super().__init__("search", 100)
        self.op = op

    def check(self, state: AgentState, call: CallKey) -> Any:
        if self.op == "check":
            raise RuntimeError(SEARCH["q"])
        return "not a denial" if self.op == "returns" else None

    def record(self, state: AgentState, call: CallKey) -> None:
        if self.op == "record":
            raise RuntimeError(SEARCH["q"])

    def observe(self, state: AgentState, call: CallKey, result: ToolResult) -> None:
        if self.op == "observe":
            raise RuntimeError(SEARCH["q"])


@pytest.mark.parametrize("thing", [object(), "cap", 3, Budget, type("NoKind", (), {"check": print})()])
def test_what_is_not_a_breaker_is_refused_when_the_guard_is_built(thing: Any) -> None:
    with pytest.raises(ConfigError, match=r"breakers\[1\]: .* is not allowed: expected a breaker"):
        Guard(breakers=[Budget("search", 2), thing])


@pytest.mark.parametrize("op", ["check", "returns", "record", "observe"])
def test_a_breaker_that_fails_leaves_the_configured_ones_judging(
    op: str, caplog: pytest.LogCaptureFixture
) -> None:
    guard = Guard(breakers=[Raising(op)])
    decisions = []
    for _ in range(8):
        decision = guard.check("search", SEARCH, "a")
        decisions.append(decision.allowed)
        if decision.allowed:
            guard.record_result("search", SEARCH, "no results", "a")
    assert decisions == [True] * 5 + [False] * 3  # the window's same-result rule, as without it
    assert guard.stats()["fail_open"]["breaker"] >= 1
    assert SEARCH["q"] not in caplog.text
