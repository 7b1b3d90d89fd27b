"""The breakers a configuration asks for, in the guard's order of evaluation."""

from __future__ import annotations

from ..config import GuardConfig
from . import Breaker
from .registry import REGISTRY

__all__ = ["build_breakers"]


def build_breakers(config: GuardConfig) -> tuple[Breaker, ...]:
    """Each registered breaker the configuration turns on, in the registry's order: cap,
    window (``duplicate``), loop brake (``repeat``), ``same_error``, ``stall``,
    ``near_duplicate``, ``cycle``: cheapest and most certain first."""
    built = (cls.from_config(config) for cls in REGISTRY.values())
    return tuple(b for b in built if b is not None)
