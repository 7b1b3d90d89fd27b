"""Old import path, kept working: the same objects as ``loopfuse.analysis.replay``."""

from __future__ import annotations

from .analysis.replay import (
    AgentReplay,
    ReplayDenial,
    replay_calls,
)

__all__ = ["AgentReplay", "ReplayDenial", "replay_calls"]
