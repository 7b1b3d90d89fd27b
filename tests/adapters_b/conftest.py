"""Fixtures of the adapter tests: a real redis-server for the tests that need a shared store."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.stores.conftest import REDIS_SERVER, RedisServer


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    if REDIS_SERVER is None:
        pytest.skip("redis-server is not installed")
    server = RedisServer(Path(tmp_path_factory.mktemp("redis")))
    server.start()
    yield server.url
    server.stop()


@pytest.fixture(params=["memory", "redis"])
def store_url(request: pytest.FixtureRequest) -> str:
    """``memory://``, or a key prefix of this test's own on the shared redis-server."""
    if request.param == "memory":
        return "memory://"
    return str(request.getfixturevalue("redis_url"))


@pytest.fixture
def store_prefix() -> str:
    return f"t{uuid.uuid4().hex[:12]}:"
