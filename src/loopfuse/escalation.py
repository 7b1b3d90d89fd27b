"""Old import path, kept working: the same objects as ``loopfuse._escalation``."""

from __future__ import annotations

from ._escalation import (
    escalation_point,
    first_denied_repeat,
)

__all__ = [
    "escalation_point",
    "first_denied_repeat",
]
