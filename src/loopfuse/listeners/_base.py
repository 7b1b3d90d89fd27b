"""Listener hooks: subclass and override what you need; every hook does nothing by default."""

from __future__ import annotations

from typing import Any

from ..decision import Decision

__all__ = ["GuardListener"]


class GuardListener:
    """Receives the guard's events. Exceptions raised by a hook are logged and ignored.

    ``agent`` is the identity the host passed to ``check``. No hook receives argument
    values. A check the guard could not judge calls ``on_fail_open`` then
    ``on_unjudged_check`` (not ``on_check``); count ``on_check`` plus ``on_unjudged_check``
    to get ``guard.stats()["checks"]``.
    """

    def on_check(self, decision: Decision, agent: Any) -> None:
        """After every guarded check, allowed or denied."""

    def on_deny(self, decision: Decision, agent: Any, first: bool) -> None:
        """After a denial; ``first`` when it is the agent's first denial of that kind."""

    def on_escalate(self, decision: Decision, agent: Any) -> None:
        """When an agent reached ``abort_after_denials`` denials in a row: once per episode
        (the next denials, still escalated, do not call it again; an allowed call or
        ``forget`` ends the episode)."""

    def on_fail_open(self, reason: str, tool: str, agent: Any) -> None:
        """When the guard allowed a call it could not judge (``reason`` says why)."""

    def on_unjudged_check(self, reason: str, tool: str, agent: Any) -> None:
        """Right after ``on_fail_open``, when that fail-open was a call's check (the call was
        allowed unjudged); not for results, invalid turns or the incident log."""
