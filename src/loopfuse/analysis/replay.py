"""Replaying recorded calls through a guard: where it would have stopped them.

One rule for every offline reader (``loopfuse replay``, ``scan`` and ``eval``): each
recorded call goes to ``Guard.check`` as a host would send it, an invalid turn (a tool
named ``_...``, as the corpora's ``_format_error``) to ``Guard.note_invalid``, and a call's
recorded result, once the call is allowed (shadow mode allows every call), to ``Guard.record_result``. A denial is a decision that is
not allowed, or a shadow-mode decision that names a breaker (``Decision.shadow``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass, field

from ..config import GuardConfig, StoreConfig
from ..decision import Decision
from ..guard import Guard
from .transcripts.model import ToolCall

__all__ = [
    "AgentReplay",
    "ReplayDenial",
    "ShadowAgent",
    "is_denial",
    "is_invalid",
    "replay_calls",
    "replay_turn",
    "shadow_config",
]


@dataclass(frozen=True, slots=True)
class ReplayDenial:
    step: int
    agent: str
    tool: str
    kind: str
    count: int
    limit: int
    rule: str = ""  # the configuration key whose limit was reached, as in Decision.rule


@dataclass
class AgentReplay:
    """One agent of one run: its calls, the denials, and what the guard would have saved.

    ``saved`` counts the denied calls, plus every later call once the agent escalated
    (``abort_after_denials`` denials in a row stop the run).
    """

    run: str
    agent: str
    calls: int = 0
    denials: list[ReplayDenial] = field(default_factory=list)
    saved: int = 0
    escalated_at: int | None = None

    @property
    def first_denial_step(self) -> int | None:
        return self.denials[0].step if self.denials else None


def shadow_config(config: GuardConfig) -> GuardConfig:
    """``config`` for a replay: no incident log, state in this process (never a shared store)."""
    cb = dataclasses.replace(config.circuit_breaker, incident_log=None)
    return dataclasses.replace(config, circuit_breaker=cb, store=StoreConfig())


def is_invalid(call: ToolCall) -> bool:
    """An invalid turn: the model produced no usable call (the corpora's ``_format_error``,
    ``_empty_action``: a tool name starting with ``_``)."""
    return call.tool.startswith("_")


def is_denial(decision: Decision) -> bool:
    """Whether a breaker refused the call (in shadow mode too, where it is let through)."""
    return not decision.allowed or (decision.shadow and decision.kind is not None)


def replay_turn(guard: Guard, call: ToolCall, agent: str) -> Decision:
    """One recorded call through ``guard`` as a host would send it (see the module)."""
    if is_invalid(call):
        return guard.note_invalid(agent=agent, reason=call.tool)
    decision = guard.check(call.tool, call.args, agent)
    if decision.allowed and (call.result is not None or call.ok is not None):
        guard.record_result(call.tool, call.args, call.result, agent, ok=call.ok)
    return decision


class ShadowAgent:
    """One agent of one run replayed call by call, kept only until its first denial (the
    rest of its calls are not checked): ``add`` each call, then ``close`` to drop its state."""

    __slots__ = ("_guard", "_identity", "denial")

    def __init__(self, guard: Guard, run: str, agent: str) -> None:
        self._guard, self._identity = guard, f"{run}/{agent}"
        self.denial: ReplayDenial | None = None

    def add(self, call: ToolCall) -> None:
        if self.denial is None:
            decision = replay_turn(self._guard, call, self._identity)
            if is_denial(decision):
                self.denial = _denial(call, decision)

    def close(self) -> None:
        self._guard.forget(self._identity)


def replay_calls(calls: Iterable[ToolCall], guard: Guard) -> list[AgentReplay]:
    """Every call through ``guard`` (each run's agents are separate), in order of arrival."""
    agents: dict[tuple[str, str], AgentReplay] = {}
    for call in calls:
        key = (call.run, call.agent)
        report = agents.get(key)
        if report is None:
            report = agents[key] = AgentReplay(call.run, call.agent)
        _replay_one(call, guard, report, f"{call.run}/{call.agent}")
    for run, agent in agents:
        guard.forget(f"{run}/{agent}")
    return list(agents.values())


def _replay_one(call: ToolCall, guard: Guard, report: AgentReplay, identity: str) -> None:
    report.calls += 1
    if report.escalated_at is not None:
        report.saved += 1
        return
    decision = replay_turn(guard, call, identity)
    if not is_denial(decision):
        return
    report.saved += 1
    report.denials.append(_denial(call, decision))
    if decision.escalate:
        report.escalated_at = call.step


def _denial(call: ToolCall, decision: Decision) -> ReplayDenial:
    kind = decision.kind or "unknown"
    return ReplayDenial(call.step, call.agent, call.tool, kind, decision.count, decision.limit, decision.rule)
