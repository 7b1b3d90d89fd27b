"""Old import path, kept working: the same objects as ``loopfuse.analysis.transcripts.swe_agent``."""

from __future__ import annotations

from ..analysis.transcripts.swe_agent import (
    SWE_AGENT_COMMANDS,
    read_mini_swe_agent,
    read_swe_agent,
    swe_agent_ok,
    swe_agent_tool,
)

__all__ = ["SWE_AGENT_COMMANDS", "read_mini_swe_agent", "read_swe_agent", "swe_agent_ok", "swe_agent_tool"]
