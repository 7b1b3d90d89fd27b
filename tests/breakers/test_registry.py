"""The registry drives building, configuration, texts and the Redis scripts; custom breakers."""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import pytest

from loopfuse import ConfigError, Guard, parse_config
from loopfuse._calls import CallKey
from loopfuse._messages import RULE_MESSAGES
from loopfuse._state import AgentState, ToolResult
from loopfuse.breakers.build import build_breakers
from loopfuse.breakers.registry import REGISTRY, BreakerUnit
from loopfuse.decision import Denial, Kind
from loopfuse.stores.redis_scripts import SUPPORTED_KINDS


def test_the_default_guard_runs_every_registered_breaker_but_the_loop_brake_in_order() -> None:
    kinds = [b.kind for b in build_breakers(parse_config({}))]
    assert kinds == [k for k in REGISTRY if k != "repeat"]  # no [loop_brake] section: no brake
    assert tuple(REGISTRY) == SUPPORTED_KINDS


@pytest.mark.parametrize("kind", [k for k, cls in REGISTRY.items() if cls.section == k])
def test_a_breaker_owning_its_section_is_switched_off_by_it(kind: str) -> None:
    kinds = [b.kind for b in build_breakers(parse_config({kind: {"enabled": False}}))]
    assert kind not in kinds


def test_a_section_error_names_the_section_key_value_and_what_is_allowed() -> None:
    with pytest.raises(ConfigError) as caught:
        parse_config({"stall": {"error_limit": -1}})
    assert "stall" in str(caught.value) and "error_limit" in str(caught.value) and "-1" in str(caught.value)
    with pytest.raises(ConfigError, match="did you mean 'error_limit'"):
        parse_config({"stall": {"eror_limit": 2}})


def test_every_rule_a_script_can_report_has_its_sentence() -> None:
    """Each rule a denial from the Redis script is mapped to (``script_rule``) has a sentence."""
    config = parse_config({"repeat": {"limit": 3}, "tools": {"grep": {"duplicate_limit": 2}}})
    codes = ("", "window", "result", "same_result", "progress", "identical", "error")
    for built in build_breakers(config):
        breaker = cast(BreakerUnit, built)
        for tool in ("grep", "ls"):
            for code in codes:
                assert breaker.script_rule(code, tool) in RULE_MESSAGES, (breaker.kind, code, tool)
    assert "stall.error_limit" in RULE_MESSAGES


class Budget:
    """A custom breaker: at most ``limit`` calls of one tool per agent, counted in its own
    slice of each agent's state."""

    kind: Kind = "cap"
    records = True

    def __init__(self, tool: str, limit: int) -> None:
        self.tool, self.limit = tool, limit

    def check(self, state: AgentState, call: CallKey) -> Denial | None:
        seen = state.unit("budget", lambda: [0])
        if call.tool == self.tool and seen[0] >= self.limit:
            return Denial("cap", seen[0], self.limit)
        return None

    def record(self, state: AgentState, call: CallKey) -> None:
        state.unit("budget", lambda: [0])[0] += call.tool == self.tool

    def refused(self, state: AgentState, call: CallKey) -> None:
        """A refused call changes nothing."""

    def observe(self, state: AgentState, call: CallKey, result: ToolResult) -> None:
        """Results do not matter."""


def test_a_custom_breaker_runs_after_the_configured_ones_in_process() -> None:
    guard = Guard(breakers=[Budget("search", 2)])
    allowed = [guard.check("search", {"q": q}).allowed for q in "abc"]
    assert allowed == [True, True, False]
    assert guard.check("read", {"path": "x"}).allowed
    assert guard.check("search", {"q": "a"}, agent="other").allowed


class AfterFailures(Budget):
    """A custom breaker that only judges agents once they report results: it counts every
    check it is asked, so a test can see when the store consults it."""

    awaits_results = True

    def check(self, state: AgentState, call: CallKey) -> Denial | None:
        asked = state.unit("asked", lambda: [0])
        asked[0] += 1
        return Denial("cap", asked[0], 0) if asked[0] >= self.limit else None


def test_a_breaker_that_awaits_results_is_not_asked_before_the_first() -> None:
    guard = Guard(breakers=[AfterFailures("search", 2)])
    assert all(guard.check("search", {"q": q}).allowed for q in "abcdef")
    guard.record_result("search", {"q": "f"}, "nothing")
    assert [guard.check("search", {"q": q}).allowed for q in "gh"] == [True, False]


def test_the_redis_store_refuses_a_breaker_it_cannot_run() -> None:
    extra: Any = Budget("search", 2)
    with pytest.raises(ConfigError, match="cannot evaluate the breaker"):
        Guard(breakers=[extra], store="redis://127.0.0.1:1")


@pytest.mark.parametrize("kind", sorted(REGISTRY))
def test_every_registered_breaker_is_in_the_readme_table_and_has_its_docs_section(kind: str) -> None:
    root = Path(__file__).resolve().parents[2]
    rows = [line for line in (root / "README.md").read_text().splitlines() if line.startswith("| ")]
    headings = [
        line for line in (root / "docs" / "breakers.md").read_text().splitlines() if line.startswith("### ")
    ]
    assert any(f"`{kind}`" in row.split("|")[1] for row in rows), kind
    assert any(f"`{kind}`" in heading for heading in headings), kind
