"""Helpers for the guard-level timelines: one breaker alone on each store, calls with results."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from loopfuse import Guard
from tests.store_fixtures import GuardFactory

Alone = Callable[[str, dict[str, Any]], Guard]

OFF = {"enabled": False}
ONLY_NEW = {"cycle": OFF, "near_duplicate": OFF, "same_error": OFF, "failures": OFF}


def run(guard: Guard, tool: str, args: Any, result: Any = None, *, ok: bool | None = None) -> bool:
    """Check one call; when allowed, report its result as an adapter would. True if allowed."""
    decision = guard.check(tool, args, "a")
    if decision.allowed and (result is not None or ok is not None):
        guard.record_result(tool, args, result, "a", ok=ok)
    return decision.allowed


@pytest.fixture
def alone(make_guard: GuardFactory) -> Alone:
    """Guards with only one of the new breakers on (window breaker and cap off), on each store."""

    def build(section: str, body: dict[str, Any]) -> Guard:
        return make_guard({"circuit_breaker": OFF, **ONLY_NEW, section: body})

    return build
