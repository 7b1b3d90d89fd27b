"""What a guarded MCP call answers when the guard refuses it (shared by middleware and proxy)."""

from __future__ import annotations

import contextlib
from collections import OrderedDict
from typing import TYPE_CHECKING, Any

from ..._shown import logged, shown_tool
from ...errors import LoopAbortedError
from ...incidents import logger

if TYPE_CHECKING:
    from ...decision import Decision
    from ...guard import Guard

__all__ = ["refusal_text"]

_ESCALATED_KEPT = 4096
_escalated: OrderedDict[Any, None] = OrderedDict()
"""The (guard, agent) pairs whose escalation was logged, until their streak resets; bounded."""


def refusal_text(decision: Decision, agent: Any, guard: Guard) -> str | None:
    """None when allowed; else the denial text, or the stop text once the agent escalated.

    An MCP server cannot stop its client's run: after escalation it keeps refusing,
    and the text says the agent is stuck and must stop calling tools.
    """
    if decision.allowed or not decision.escalate:
        if _escalated:
            _forget(guard, agent)
        return None if decision.allowed else decision.message
    if _first_escalation(guard, agent):
        logger.warning(
            "loopfuse: agent %s escalated on %s; refusing its calls from now on",
            logged(str(agent)),
            logged(shown_tool(decision.tool)),
        )
    stop = LoopAbortedError(
        agent=str(agent),
        tool=decision.tool,
        denials=guard.config.guard.abort_after_denials or 0,
        kind=decision.kind,
    )
    return f"{stop} Stop calling tools and report to the user what is blocking you."


def _first_escalation(guard: Guard, agent: Any) -> bool:
    """True once per escalation of ``agent`` (until a call of it is allowed again)."""
    try:
        key = (id(guard), agent)
        if key in _escalated:
            return False
        _escalated[key] = None
    except TypeError:  # an unhashable agent: log every time rather than never
        return True
    if len(_escalated) > _ESCALATED_KEPT:
        _escalated.popitem(last=False)
    return True


def _forget(guard: Guard, agent: Any) -> None:
    with contextlib.suppress(TypeError):
        _escalated.pop((id(guard), agent), None)
