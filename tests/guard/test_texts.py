"""What the model reads: a tool name it made up cannot make a denial or a warning unbounded."""

from __future__ import annotations

from loopfuse import Guard
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
