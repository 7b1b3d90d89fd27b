"""The breakers a configuration asks for, in the guard's order of evaluation."""

from __future__ import annotations

from ..checks import fail
from ..config import GuardConfig
from . import Breaker
from .registry import REGISTRY

__all__ = ["build_breakers", "build_warners"]


def build_breakers(config: GuardConfig) -> tuple[Breaker, ...]:
    """Each registered breaker the configuration turns on, in the registry's order: cap,
    window (``duplicate``), loop brake (``repeat``), ``same_error``, ``stall``,
    ``near_duplicate``, ``cycle``, ``failures``: cheapest and most certain first."""
    built = (cls.from_config(config) for cls in REGISTRY.values())
    return tuple(b for b in built if b is not None)


def build_warners(config: GuardConfig) -> tuple[Breaker, ...]:
    """For each breaker whose section sets ``warn_at``, its copy with limits lowered to it
    (``warned``), in the registry's order: where one would deny and no breaker does, the
    call runs with a warning."""
    warners: list[Breaker] = []
    for cls in REGISTRY.values():
        breaker = cls.from_config(config)
        warn_at = getattr(config.section(cls.section), "warn_at", 0) if breaker is not None else 0
        if warn_at and hasattr(breaker, "warned"):
            warners.append(_warning_before_denial(breaker.warned(warn_at), cls.section, warn_at))
    return tuple(warners)


def _warning_before_denial(warner: Breaker, section: str, warn_at: int) -> Breaker:
    """``warner``; ``ConfigError`` when its breaker denies before it could warn."""
    highest = getattr(warner, "highest_limit", warn_at + 1)
    if warn_at >= highest:
        raise fail(
            section,
            "warn_at",
            warn_at,
            f"below the highest of its breaker's limits ({highest}): it denies first",
        )
    return warner
