"""Section ``store``: where agent state lives, and what a check does when that store fails."""

from __future__ import annotations

from dataclasses import dataclass

from .checks import check_bool, check_int, check_number, check_store_policy, check_store_url, fail

__all__ = ["MAX_WAIT", "StoreConfig"]

MAX_WAIT = 3600.0  # seconds: the longest store timeout a configuration may set


@dataclass(frozen=True)
class StoreConfig:
    """Section ``store``: where agent state lives and what happens when that store fails.

    ``idle_expiry`` (seconds) defaults to ``[guard] agent_idle_seconds``; ``timeout``
    bounds every round trip to a remote store, ``connect_timeout`` every new connection.
    A Redis store keeps up to ``max_connections`` connections per process; a check finding
    them all busy waits up to ``pool_timeout`` seconds for one (load is not an outage). A
    Redis store sends a reported result with the agent's next check (one round trip per tool
    call), or after ``result_flush_delay`` seconds without one (0: at once, its own round trip).
    With ``redis_functions`` it loads its scripts as a Redis Function library (Redis 7.0+; a
    server that refuses it gets ``EVALSHA``); false: ``EVALSHA`` only, nothing left in Redis.
    """

    url: str = "memory://"
    on_store_error: str = "allow"
    prefix: str = "loopfuse:"
    idle_expiry: float | None = None
    timeout: float = 0.25
    connect_timeout: float = 1.0
    max_connections: int = 20
    pool_timeout: float = 1.0
    result_flush_delay: float = 0.5
    redis_functions: bool = True

    def __post_init__(self) -> None:
        s = "store"
        check_bool(s, "redis_functions", self.redis_functions)
        check_store_url(s, "url", self.url)
        check_store_policy(s, "on_store_error", self.on_store_error)
        if not isinstance(self.prefix, str) or "{" in self.prefix or "}" in self.prefix:
            raise fail(s, "prefix", self.prefix, "a string without '{' or '}' (they pick the hash slot)")
        if self.idle_expiry is not None:
            object.__setattr__(self, "idle_expiry", check_number(s, "idle_expiry", self.idle_expiry, 0.001))
        check_int(s, "max_connections", self.max_connections, 1)
        for key in ("timeout", "connect_timeout", "pool_timeout"):  # a socket takes at most ~9e9
            object.__setattr__(self, key, check_number(s, key, getattr(self, key), 0.001, MAX_WAIT))
        delay = self.result_flush_delay
        if isinstance(delay, bool) or not isinstance(delay, int | float) or not 0 <= delay <= 60:
            raise fail(s, "result_flush_delay", delay, "a number of seconds from 0 to 60")
        object.__setattr__(self, "result_flush_delay", float(delay))
