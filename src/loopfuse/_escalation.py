"""Where the guard ends a loop: the escalation point of a configuration.

Hosts have turn or step limits of their own (the OpenAI Agents SDK's ``max_turns``,
smolagents' ``max_steps``, LangGraph's ``recursion_limit``). A host whose limit comes
before the guard's escalation ends a looping run with its own error instead of the guard's
clean stop; the adapters warn when they can see such a limit.
"""

from __future__ import annotations

from .breakers.build import build_breakers
from .config import GuardConfig

__all__ = ["escalation_point", "first_denied_repeat"]


def escalation_point(config: GuardConfig) -> int | None:
    """The tool call at which the guard ends a run that makes one call again and again from
    its start, getting the same successful result each time: the first call a breaker denies plus
    ``abort_after_denials - 1`` more denied attempts (8 with the defaults: 5 allowed calls,
    then 3 denials). With one call per model turn, the host must allow that many turns.

    Limits of ``[tools.<name>]`` tables are not considered (the point is a tool's without
    one). None when nothing ends such a run: shadow mode, ``abort_after_denials = 0``, or
    no breaker that denies repeats.
    """
    abort = config.guard.abort_after_denials
    first = first_denied_repeat(config)
    if abort is None or first is None or config.guard.mode == "shadow":
        return None
    return first + abort - 1


def first_denied_repeat(config: GuardConfig) -> int | None:
    """The first identical call (same arguments, same successful result each time) that a
    breaker of ``config`` denies; None when none does."""
    allowed = _allowed_repeats(config)
    return min(allowed) + 1 if allowed else None


def _allowed_repeats(config: GuardConfig) -> list[int]:
    """How many identical calls each enabled breaker allows before it denies the next."""
    allowed = (getattr(b, "allowed_repeats", lambda: None)() for b in build_breakers(config))
    return [n for n in allowed if n]
