"""Old import path, kept working: the same objects as ``loopfuse._calls``."""

from __future__ import annotations

from ._calls import (
    CallKey,
    call_digest,
    canonical_json,
    strip_ignored,
)

__all__ = [
    "CallKey",
    "call_digest",
    "canonical_json",
    "strip_ignored",
]
