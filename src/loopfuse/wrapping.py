"""Old import path, kept working: the same objects as ``loopfuse._wrapping``."""

from __future__ import annotations

from ._wrapping import (
    CURRENT_SESSION,
    abort_error,
    agent_session,
    call_arguments,
    current_agent,
    guarded,
    refusal_text,
    run_before,
    warned,
)

__all__ = [
    "CURRENT_SESSION",
    "abort_error",
    "agent_session",
    "call_arguments",
    "current_agent",
    "guarded",
    "refusal_text",
    "run_before",
    "warned",
]
