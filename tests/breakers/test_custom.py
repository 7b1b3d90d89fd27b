"""Your own breakers cannot switch the guard off: what is not a breaker is refused when the
guard is built, and a breaker that raises allows the call while the configured ones judge it."""

from __future__ import annotations

from typing import Any

import pytest

from loopfuse import ConfigError, Denial, Guard
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


class CountsOnlyWhatItJudged(Budget):
    """A breaker whose check raises on every other call, and that counts the calls it records."""

    def __init__(self) -> None:
        super().__init__("search", 100)
        self.checked, self.recorded = 0, 0

    def check(self, state: AgentState, call: CallKey) -> Any:
        self.checked += 1
        if self.checked % 2:
            raise RuntimeError("cannot judge")
        return None

    def record(self, state: AgentState, call: CallKey) -> None:
        self.recorded += 1


def test_a_call_whose_check_raised_is_not_recorded_by_that_breaker() -> None:
    breaker = CountsOnlyWhatItJudged()
    guard = Guard(breakers=[breaker])
    assert all(guard.check("read", {"page": n}, "a").allowed for n in range(6))
    assert (breaker.checked, breaker.recorded) == (6, 3)
    assert guard.stats()["fail_open"]["breaker"] == 3  # once per call it could not judge


def test_a_library_breaker_of_a_kind_the_guard_has_is_refused() -> None:
    from loopfuse.breakers import RepeatBreaker

    with pytest.raises(ConfigError, match=r"breakers\[0\]: RepeatBreaker .* kind 'repeat'.*\[repeat\]"):
        Guard.from_config({"loop_brake": {"max_repeats": 10}}, breakers=[RepeatBreaker(4)])
    with pytest.raises(ConfigError, match=r"breakers\[1\]: RepeatBreaker"):
        Guard(breakers=[RepeatBreaker(4), RepeatBreaker(5)])
    guard = Guard(breakers=[RepeatBreaker(4)])  # no [loop_brake]: this one is the guard's only
    assert [guard.check("t", {}, "a").allowed for _ in range(5)] == [True] * 4 + [False]


OFF = {"circuit_breaker": {"cap_enabled": False, "duplicate_enabled": False}, "stall": {"enabled": False}}


@pytest.mark.parametrize(
    ("make", "refused"),
    [
        (
            lambda b: b.CallCap(-1),
            r"CallCap \(its limit is max_calls_per_agent\): \[circuit_breaker\] max_calls_per_agent = -1 .* >= 0",
        ),
        (lambda b: b.CallCap("300"), r"CallCap .*: \[circuit_breaker\] max_calls_per_agent = '300'"),
        (
            lambda b: b.WindowBreaker(0),
            r"WindowBreaker \(its limit is duplicate_limit\): .* duplicate_limit = 0 .* >= 1",
        ),
        (
            lambda b: b.WindowBreaker(2, tool_limits={"t": -1}),
            r"WindowBreaker .*: \[tools.t\] duplicate_limit = -1",
        ),
        (lambda b: b.CycleBreaker(10_000, 3), r"CycleBreaker: \[cycle\] max_period = 10000 .* from 2 to 16"),
        (lambda b: b.StallBreaker(3, 3, window=1), r"StallBreaker: \[stall\] window = 1"),
        (
            lambda b: b.NearDuplicateBreaker(9, 3),
            r"NearDuplicateBreaker: \[near_duplicate\] window = 3 .* limit \(9\)",
        ),
        (lambda b: b.RepeatBreaker(4, result_aware=1), r"RepeatBreaker: \[loop_brake\] result_aware = 1"),
    ],
)
def test_a_library_breaker_built_with_a_value_its_section_refuses_is_refused(make: Any, refused: str) -> None:
    """``CallCap(-1)`` and ``WindowBreaker(0)`` denied every call; ``CycleBreaker(10_000, 3)``
    made every check five times slower."""
    from loopfuse import breakers

    off = {**OFF, "cycle": {"enabled": False}, "near_duplicate": {"enabled": False}}
    with pytest.raises(ConfigError, match=rf"breakers\[0\]: {refused}"):
        Guard.from_config(off, breakers=[make(breakers)])


def test_a_library_cap_built_by_hand_counts_as_configured() -> None:
    from loopfuse.breakers import CallCap

    guard = Guard.from_config(OFF, breakers=[CallCap(3)])
    assert [guard.check("t", {"n": n}, "a").allowed for n in range(4)] == [True] * 3 + [False]


def test_a_class_passed_for_a_breaker_is_named_in_the_error() -> None:
    with pytest.raises(ConfigError, match=r"breakers\[0\]: Budget is not allowed: .* a class"):
        Guard(breakers=[Budget])  # type: ignore[list-item]


class SearchBudget(Budget):
    """``Budget`` under a kind of its own, with its own denial text."""

    kind = "budget"  # type: ignore[assignment]  # a custom kind: not one of the library's
    deny_message = "loopfuse refused this {tool} call: {count} searches made, the budget is {limit}. Report what you found."

    def check(self, state: AgentState, call: CallKey) -> Denial | None:
        denial = super().check(state, call)
        return None if denial is None else Denial("budget", denial.count, denial.limit)


def test_a_breaker_gives_its_own_denial_text() -> None:
    guard = Guard(breakers=[SearchBudget("search", 2)])
    decisions = [guard.check("search", {"q": q}, "a") for q in "abc"]
    assert decisions[2].message == (
        "loopfuse refused this search call: 2 searches made, the budget is 2. Report what you found."
    )
    own = [SearchBudget("search", 2)]
    guard = Guard.from_config({"guard": {"deny_message": "no: {kind}"}}, breakers=own)
    assert [guard.check("search", {"q": q}, "a").message for q in "abc"][
        2
    ] == "no: budget"  # the guard's wins


@pytest.mark.parametrize("text", ["{args}", 3, "{count:s}"])
def test_a_breakers_denial_text_is_checked_when_the_guard_is_built(text: object) -> None:
    breaker = SearchBudget("search", 2)
    breaker.deny_message = text  # type: ignore[assignment]
    with pytest.raises(
        ConfigError, match=r"breakers\[0\]: SearchBudget.deny_message = .* is not allowed: expected a text"
    ):
        Guard(breakers=[breaker])


def test_a_breakers_kind_names_its_denials_alone() -> None:
    shared = SearchBudget("search", 1)
    shared.kind = "duplicate"  # type: ignore[assignment]  # the window's kind: its text would be the window's too
    with pytest.raises(ConfigError, match=r"SearchBudget.deny_message is not allowed with kind 'duplicate'"):
        Guard(breakers=[shared])
    for kind in ("store", "invalid", "a\nb"):
        odd = Budget("search", 1)
        odd.kind = kind  # type: ignore[assignment]
        with pytest.raises(ConfigError, match=r"Budget.kind = .* is not allowed: expected a printable name"):
            Guard(breakers=[odd])
    guard = Guard(breakers=[Budget("search", 1)])  # a library kind without a text of its own
    assert [guard.check("search", {"q": q}, "a").allowed for q in "ab"] == [True, False]


@pytest.mark.parametrize("value", [None, 5, "abc", SearchBudget("search", 1)])
def test_breakers_and_listeners_not_given_as_lists_are_named(value: object) -> None:
    with pytest.raises(ConfigError, match=r"breakers = .* is not allowed: expected a list"):
        Guard(breakers=value)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match=r"listeners = .* is not allowed: expected a list"):
        Guard(listeners=value)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match=r"listeners\[0\] = .* expected a GuardListener"):
        Guard(listeners=[print])  # type: ignore[list-item]


class Odd(Budget):
    """A breaker denying past its limit with a denial whose fields are not what ``Denial`` says."""

    kind = "budget"  # type: ignore[assignment]  # a kind of its own, not one of the guard's

    def check(self, state: AgentState, call: CallKey) -> Any:
        denial = super().check(state, call)
        return None if denial is None else Denial(["budget"], "2", None, {"rule": 1})  # type: ignore[arg-type]


def test_a_denial_with_fields_the_guard_cannot_word_still_denies() -> None:
    """An unhashable kind made wording the denial raise, and the call was allowed."""
    guard = Guard(breakers=[Odd("search", 2)])
    decisions = [guard.check("search", {"q": n}, "a") for n in range(3)]
    assert [d.allowed for d in decisions] == [True, True, False]
    assert decisions[2].kind == "budget" and "budget: 0 times, limit 0" in (decisions[2].message or "")
    assert guard.stats()["fail_open"] == {}
