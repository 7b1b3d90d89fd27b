"""Old import path, kept working: the same objects as ``loopfuse._volatile``."""

from __future__ import annotations

from ._volatile import (
    ERROR_MASKS,
    MASKS,
    RESULT_MASKS,
    int_digest,
    pair_key,
    result_digest,
    result_digests,
)

__all__ = [
    "ERROR_MASKS",
    "MASKS",
    "RESULT_MASKS",
    "int_digest",
    "pair_key",
    "result_digest",
    "result_digests",
]
