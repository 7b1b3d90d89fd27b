"""Helpers for the detector tests: a guard per test, calls with results."""

from __future__ import annotations

from typing import Any

from loopfuse import Guard

OFF = {"enabled": False}
ONLY_NEW = {"cycle": OFF, "near_duplicate": OFF, "same_error": OFF}


def run(guard: Guard, tool: str, args: Any, result: Any = None, *, ok: bool | None = None) -> bool:
    """Check one call; when allowed, report its result as an adapter would. True if allowed."""
    decision = guard.check(tool, args, "a")
    if decision.allowed and (result is not None or ok is not None):
        guard.record_result(tool, args, result, "a", ok=ok)
    return decision.allowed


def alone(section: str, body: dict[str, Any]) -> Guard:
    """A guard with only one of the new breakers on (window breaker and cap off)."""
    config: dict[str, Any] = {"circuit_breaker": OFF, **ONLY_NEW, section: body}
    return Guard.from_config(config)
