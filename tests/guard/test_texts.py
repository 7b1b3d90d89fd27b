"""What the model reads: a tool name it made up cannot make a denial, a warning or a stop unbounded."""

from __future__ import annotations

import pytest

from loopfuse import Guard, LoopAbortedError, LoopBrake, LoopBrakeError
from loopfuse._calls import CallKey
from loopfuse._messages import DEFAULT_MESSAGES, RULE_MESSAGES, denial_message
from loopfuse._state import AgentState, ToolResult
from loopfuse.decision import Denial, Kind
from tests.store_fixtures import GuardFactory

LONG = "look_" + "x" * 20_000  # a name no framework checked, as a model may invent


def test_a_denial_shows_a_long_tool_name_cut_to_128_characters(make_guard: GuardFactory) -> None:
    guard = make_guard()
    decisions = [guard.check(LONG, {"q": "same"}, "a") for _ in range(7)]
    text = decisions[-1].message or ""
    assert decisions[-1].kind == "duplicate" and decisions[-1].tool == LONG
    assert text.startswith("loopfuse refused this " + LONG[:125] + "... call: ")
    assert LONG[:126] not in text and "(duplicate_limit 6)" in text


def test_a_warning_shows_a_long_tool_name_cut_the_same_way(make_guard: GuardFactory) -> None:
    guard = make_guard({"circuit_breaker": {"warn_at": 4}})
    text = [guard.check(LONG, {"q": "same"}, "a") for _ in range(5)][-1].warning or ""
    assert text.startswith("[loopfuse warning: this " + LONG[:125] + "... call ran")
    assert LONG[:126] not in text


def test_a_name_of_128_characters_is_shown_whole() -> None:
    name = "t" * 128
    guard = Guard()
    text = [guard.check(name, {"q": 1}, "a") for _ in range(7)][-1].message or ""
    assert f"this {name} call" in text


def test_the_loop_brake_error_shows_the_name_cut_and_keeps_it_whole() -> None:
    brake = LoopBrake(1)
    brake.check(tool=LONG, args={"q": 1}, session="s")
    with pytest.raises(LoopBrakeError) as info:
        brake.check(tool=LONG, args={"q": 1}, session="s")
    assert info.value.tool_name == LONG
    assert f"refused the identical {LONG[:125]}... call made 2 times" in str(info.value)
    assert LONG[:126] not in str(info.value)


def test_a_stopped_run_shows_the_last_tool_cut() -> None:
    error = LoopAbortedError(agent="a", tool=LONG, denials=3, kind="duplicate")
    assert error.tool == LONG and f"(last: {LONG[:125]}..., duplicate)" in str(error)
    assert LoopAbortedError(agent="a", tool="t" * 128, denials=3, kind=None).args[0].count("t" * 128) == 1


def test_a_store_refusal_shows_the_name_cut() -> None:
    store = {"url": "redis://127.0.0.1:1/0", "on_store_error": "deny", "timeout": 0.2, "connect_timeout": 0.2}
    guard = Guard.from_config({"store": store})
    decision = guard.check(LONG, {"q": 1}, "a")
    assert decision.kind == "store" and decision.tool == LONG
    assert (decision.message or "").startswith("loopfuse refused this " + LONG[:125] + "... call: ")
    guard.close()


class Huge:
    """A custom breaker denying every call to ``x`` with a limit past U+10FFFF (no rule)."""

    kind: Kind = "cap"
    records = True

    def check(self, state: AgentState, call: CallKey) -> Denial | None:
        return Denial("cap", 2_000_000, 2_000_000) if call.tool == "x" else None

    def record(self, state: AgentState, call: CallKey) -> None:
        """Nothing to count."""

    def refused(self, state: AgentState, call: CallKey) -> None:
        """Nothing to count."""

    def observe(self, state: AgentState, call: CallKey, result: ToolResult) -> None:
        """Results do not matter."""


@pytest.mark.parametrize("template", ["no {tool}: {limit:c}", "no {tool}: {count:c}"])
def test_a_template_that_cannot_render_a_denial_gives_the_built_in_text_and_still_denies(
    template: str,
) -> None:
    """``{limit:c}`` passes the check at construction (a sample limit of 6) but not a limit of
    2,000,000 (OverflowError): the call stays denied, with the built-in text."""
    guard = Guard.from_config({"guard": {"deny_message": template}}, breakers=[Huge()])
    decision = guard.check("x", {}, "a")
    assert not decision.allowed and decision.kind == "cap"
    assert decision.message == DEFAULT_MESSAGES["cap"].format(tool="x", count=2_000_000, limit=2_000_000)
    assert guard.stats()["fail_open"] == {} and guard.stats()["denied"] == 1


@pytest.mark.parametrize("rule", sorted(RULE_MESSAGES))
def test_each_rule_text_has_one_colon_a_sentence(rule: str) -> None:
    """A text once read "... fail again: fix the cause or stop repeating it: change your approach"."""
    text = denial_message(None, "api", Denial("same_error", 4, 4, rule))
    assert all(sentence.count(":") <= 1 for sentence in text.split(". ")), text
