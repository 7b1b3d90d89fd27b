"""Shared fixtures (from tests/store_fixtures.py: the store table, guards on each store, real
redis-servers) for every test folder; area-specific fixtures live in each tests/<area>/conftest.py.

Tests that start or use a redis-server are marked ``redis`` here, at collection.
"""

from __future__ import annotations

import pytest

from tests.store_fixtures import (  # noqa: F401 - fixtures for every folder
    REDIS_FIXTURES,
    STORE_PARAMETERS,
    make_guard,
    own_redis,
    redis_server,
    redis_url,
    store_kind,
    store_prefix,
    store_url,
)


def _starts_redis(item: pytest.Item) -> bool:
    callspec = getattr(item, "callspec", None)
    on_redis = callspec is not None and any(callspec.params.get(name) == "redis" for name in STORE_PARAMETERS)
    return on_redis or not REDIS_FIXTURES.isdisjoint(getattr(item, "fixturenames", ()))


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark ``redis`` every test that starts or uses a redis-server, so ``-m "not redis"`` runs the rest."""
    for item in items:
        if _starts_redis(item):
            item.add_marker(pytest.mark.redis)
