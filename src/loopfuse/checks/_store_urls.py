"""The store settings a configuration may name: URL schemes and what to do when the store fails."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

from ..errors import ConfigError
from ._redaction import redacted
from ._validators import fail

__all__ = [
    "STORE_ERROR_POLICIES",
    "STORE_SCHEMES",
    "check_redis_database",
    "check_store_policy",
    "check_store_url",
]

STORE_SCHEMES = ("memory://", "redis://", "rediss://", "unix://")
STORE_ERROR_POLICIES = ("allow", "deny")


def check_store_url(section: str, key: str, value: Any) -> str:
    if isinstance(value, str) and value == "memory://":
        return value
    if isinstance(value, str) and value.startswith(STORE_SCHEMES[1:]):
        return check_redis_database(value)
    shown = redacted(value) if isinstance(value, str) else value
    remote = ", ".join(STORE_SCHEMES[1:])
    raise fail(section, key, shown, f"memory:// (nothing after it), or a URL starting with {remote}")


def check_store_policy(section: str, key: str, value: Any) -> str:
    if value not in STORE_ERROR_POLICIES:
        raise fail(section, key, value, "'allow' (fail open) or 'deny'")
    return str(value)


def check_redis_database(url: str) -> str:
    """redis-py reads a path that is not a number as database 0 and ``/0/1`` as 1; and
    ``?db=-1`` fails only at the first command, so every check would fail open."""
    parts = urlsplit(url)
    if parts.scheme == "unix" and unquote(parts.path) in ("", "/"):
        raise ConfigError(
            f"[store] url = {redacted(url)!r}: no socket is named: expected unix:///path/to/redis.sock"
        )
    named = [v for k, v in parse_qsl(parts.query, keep_blank_values=True) if k == "db"]
    path = unquote(parts.path)
    if parts.scheme in ("redis", "rediss") and path not in ("", "/"):
        named.append(path[1:])
    for db in named:
        if not db.isascii() or not db.isdigit():
            raise ConfigError(
                f"[store] url = {redacted(url)!r}: the database {db!r} is not allowed: "
                "expected a number >= 0 (redis://host:6379/0)"
            )
    return url
