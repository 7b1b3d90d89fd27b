"""The store settings a configuration may name: URL schemes and what to do when the store fails."""

from __future__ import annotations

from typing import Any

from ._redaction import redacted
from ._validators import fail

__all__ = ["STORE_ERROR_POLICIES", "STORE_SCHEMES", "check_store_policy", "check_store_url"]

STORE_SCHEMES = ("memory://", "redis://", "rediss://", "unix://")
STORE_ERROR_POLICIES = ("allow", "deny")


def check_store_url(section: str, key: str, value: Any) -> str:
    if isinstance(value, str) and (value == "memory://" or value.startswith(STORE_SCHEMES[1:])):
        return value
    shown = redacted(value) if isinstance(value, str) else value
    remote = ", ".join(STORE_SCHEMES[1:])
    raise fail(section, key, shown, f"memory:// (nothing after it), or a URL starting with {remote}")


def check_store_policy(section: str, key: str, value: Any) -> str:
    if value not in STORE_ERROR_POLICIES:
        raise fail(section, key, value, "'allow' (fail open) or 'deny'")
    return str(value)
