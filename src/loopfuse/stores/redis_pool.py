"""The Redis store's connection pool: how many connections, how long a check waits for one.

A check that finds every connection busy waits for one (``pool_timeout`` seconds at most)
instead of failing: a busy pool is load, not an outage. The ``[store]`` section sets the
defaults; the URL's query (``?max_connections=200&socket_timeout=0.5``) overrides them.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qsl, urlencode

from .._store_config import MAX_WAIT
from ..checks import redacted
from ..errors import ConfigError

__all__ = ["URL_KEYS", "pool_options"]

# URL query key -> (redis-py keyword, parser, what is allowed)
URL_KEYS: dict[str, tuple[str, Callable[[str], Any], str]] = {
    "max_connections": ("max_connections", int, "an integer >= 1"),
    "socket_timeout": ("socket_timeout", float, "a number of seconds > 0, at most 3600"),
    "socket_connect_timeout": ("socket_connect_timeout", float, "a number of seconds > 0, at most 3600"),
    "pool_timeout": ("timeout", float, "a number of seconds > 0, at most 3600"),
    "timeout": ("timeout", float, "a number of seconds > 0, at most 3600"),
}


def pool_options(url: str, defaults: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """``url`` without the pool keys, and ``defaults`` overridden by those keys' values;
    ``ConfigError`` names a key whose value is not allowed."""
    base, _, query = url.partition("?")
    options = dict(defaults)
    kept = []
    for key, raw in parse_qsl(query, keep_blank_values=True):
        if key in URL_KEYS:
            name, value = URL_KEYS[key][0], _parsed(url, key, raw)
            options[name] = value
        else:
            kept.append((key, raw))
    return (base + "?" + urlencode(kept) if kept else base), options


def _parsed(url: str, key: str, raw: str) -> Any:
    _, parse, allowed = URL_KEYS[key]
    try:
        value = parse(raw)
    except ValueError:
        value = None
    most = MAX_WAIT if parse is float else math.inf  # a count: any finite integer
    if value is None or not 0 < value <= most:
        shown = redacted(url)
        raise ConfigError(f"[store] url = {shown!r}: {key} = {raw!r} is not allowed: expected {allowed}")
    return value
