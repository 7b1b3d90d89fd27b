"""What a guarded MCP call answers when the guard refuses it (shared by middleware and proxy)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...errors import LoopAbortedError
from ...incidents import logger

if TYPE_CHECKING:
    from ...decision import Decision
    from ...guard import Guard

__all__ = ["refusal_text"]


def refusal_text(decision: Decision, agent: Any, guard: Guard) -> str | None:
    """None when allowed; else the denial text, or the stop text once the agent escalated.

    An MCP server cannot stop its client's run: after escalation it keeps refusing,
    and the text says the agent is stuck and must stop calling tools.
    """
    if decision.allowed:
        return None
    if not decision.escalate:
        return decision.message
    logger.warning("loopfuse: agent %s escalated on %s; still refusing", agent, decision.tool)
    stop = LoopAbortedError(
        agent=str(agent),
        tool=decision.tool,
        denials=guard.config.guard.abort_after_denials or 0,
        kind=decision.kind,
    )
    return f"{stop} Stop calling tools and report to the user what is blocking you."
