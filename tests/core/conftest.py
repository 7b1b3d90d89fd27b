"""The core tests' guard-level timelines run on both stores (``make_guard``)."""

from tests.stores.conftest import make_guard, redis_server  # noqa: F401 - fixtures shared with tests/stores
