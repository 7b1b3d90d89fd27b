"""Old import path, kept working: the same objects as ``loopfuse._agents``."""

from __future__ import annotations

from ._agents import (
    ID_ATTRIBUTES,
    AgentIdentityError,
    agent_label,
    agent_name,
)

__all__ = [
    "ID_ATTRIBUTES",
    "AgentIdentityError",
    "agent_label",
    "agent_name",
]
