"""Old import path, kept working: the same objects as ``loopfuse._messages``."""

from __future__ import annotations

from ._messages import (
    DEFAULT_MESSAGES,
    RULE_MESSAGES,
    STORE_DENIED,
    denial_message,
)

__all__ = [
    "DEFAULT_MESSAGES",
    "RULE_MESSAGES",
    "STORE_DENIED",
    "denial_message",
]
