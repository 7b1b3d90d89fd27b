"""Helpers shared by the Claude Agent SDK, Google ADK and smolagents adapters."""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import TYPE_CHECKING, Any

from ..errors import LoopAbortedError

if TYPE_CHECKING:
    from ..decision import Decision
    from ..guard import Guard

__all__ = ["abort_error", "require"]


def require(module: str, extra: str) -> ModuleType:
    """Import ``module``, or raise ImportError telling how to install loopfuse's ``extra``."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(
            f"loopfuse.adapters.{extra.replace('-', '_')} needs {module}: pip install 'loopfuse[{extra}]'"
        ) from exc


def abort_error(guard: Guard, decision: Decision, agent: Any) -> LoopAbortedError:
    """The error (and, as text, the stop reason) for an agent that escalated."""
    return LoopAbortedError(
        agent=str(agent),
        tool=decision.tool,
        denials=guard.config.guard.abort_after_denials or 0,
        kind=decision.kind,
    )
