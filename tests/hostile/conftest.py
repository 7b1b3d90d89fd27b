"""Hostile objects, and guards on both stores (``store_kind``, from tests/conftest.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from loopfuse import Guard
from tests.store_fixtures import RedisServer, unique_prefix

GuardFor = Callable[..., Guard]
# Low limits, so a few calls reach every breaker: denials, first-denial logging, escalation.
SMALL = {
    "circuit_breaker": {"duplicate_limit": 2, "window": 8, "max_calls_per_agent": 12},
    "guard": {"abort_after_denials": 2},
}


def guard_on(kind: str, server: RedisServer | None, mapping: dict[str, Any] | None = None) -> Guard:
    """A guard on ``kind`` ("memory" or "redis") with ``mapping`` (default: ``SMALL``)."""
    config = {key: dict(value) for key, value in (mapping or SMALL).items()}
    url = "memory://" if server is None else server.url
    config["store"] = {"url": url, "prefix": unique_prefix(), **config.get("store", {})}
    return Guard.from_config(config)
