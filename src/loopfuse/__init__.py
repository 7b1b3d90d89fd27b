"""loopfuse: stop AI agents from looping, in code, before the tool call runs."""

from __future__ import annotations

from ._brake import LoopBrake, decorate_tool, wrap_execute
from ._calls import call_digest, canonical_json
from ._escalation import escalation_point
from ._wrapping import agent_session
from .compaction import RapidRefillTracker
from .config import (
    CircuitBreakerConfig,
    GuardConfig,
    GuardSettings,
    LoopBrakeConfig,
    find_config_file,
    load_config_file,
    parse_config,
)
from .decision import Decision, Denial
from .errors import ConfigError, LoopAbortedError, LoopBrakeError, LoopfuseError
from .guard import Guard
from .incidents import Supervisor, SupervisorPolicy
from .listeners import GuardListener

__version__ = "0.1.0"

__all__ = [
    "CircuitBreakerConfig",
    "ConfigError",
    "Decision",
    "Denial",
    "Guard",
    "GuardConfig",
    "GuardListener",
    "GuardSettings",
    "LoopAbortedError",
    "LoopBrake",
    "LoopBrakeConfig",
    "LoopBrakeError",
    "LoopfuseError",
    "RapidRefillTracker",
    "Supervisor",
    "SupervisorPolicy",
    "__version__",
    "agent_session",
    "call_digest",
    "canonical_json",
    "decorate_tool",
    "escalation_point",
    "find_config_file",
    "load_config_file",
    "parse_config",
    "wrap_execute",
]
