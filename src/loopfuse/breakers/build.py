"""The breakers a configuration asks for, in the guard's order of evaluation."""

from __future__ import annotations

from ..config import GuardConfig
from . import (
    Breaker,
    CallCap,
    CycleBreaker,
    NearDuplicateBreaker,
    RepeatBreaker,
    SameErrorBreaker,
    WindowBreaker,
)

__all__ = ["build_breakers"]


def build_breakers(config: GuardConfig) -> tuple[Breaker, ...]:
    """Cap, window (``duplicate``), loop brake (``repeat``), ``same_error``,
    ``near_duplicate``, ``cycle``: cheapest and most certain first."""
    cb, brake = config.circuit_breaker, config.loop_brake
    breakers: list[Breaker] = []
    if cb.enabled:
        if cb.max_calls_per_agent:
            breakers.append(CallCap(cb.max_calls_per_agent))
        breakers.append(_window(config))
    if brake is not None and brake.enabled:
        assert brake.max_repeats is not None
        breakers.append(RepeatBreaker(brake.max_repeats, result_aware=brake.result_aware))
    if config.same_error.enabled:
        se = config.same_error
        batch = [tool for tool, rule in config.tools.items() if rule.batch]
        breakers.append(SameErrorBreaker(se.limit, se.identical_limit, batch))
    if config.near_duplicate.enabled:
        breakers.append(_near(config))
    if config.cycle.enabled:
        cy = config.cycle
        breakers.append(
            CycleBreaker(
                cy.max_period,
                cy.min_repeats,
                result_aware=cy.result_aware,
                only_with_results=cy.only_with_results,
            )
        )
    return tuple(breakers)


def _window(config: GuardConfig) -> WindowBreaker:
    cb = config.circuit_breaker
    limits = {t: r.duplicate_limit for t, r in config.tools.items() if r.duplicate_limit is not None}
    return WindowBreaker(
        cb.duplicate_limit,
        result_aware=cb.result_aware,
        result_limit=cb.result_limit or 0,
        same_result_limit=cb.same_result_limit,
        progress_limit=cb.progress_limit or 0,
        tool_limits=limits,
    )


def _near(config: GuardConfig) -> NearDuplicateBreaker:
    nd = config.near_duplicate
    limits = {t: r.near_duplicate_limit for t, r in config.tools.items() if r.near_duplicate_limit}
    return NearDuplicateBreaker(
        nd.limit,
        nd.window,
        result_aware=nd.result_aware,
        only_with_results=nd.only_with_results,
        tool_limits=limits,
    )
