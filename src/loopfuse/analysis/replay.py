"""Replaying recorded calls through a guard: where it would have stopped them."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from ..guard import Guard
from .transcripts.model import ToolCall

__all__ = ["AgentReplay", "ReplayDenial", "replay_calls"]


@dataclass(frozen=True, slots=True)
class ReplayDenial:
    step: int
    agent: str
    tool: str
    kind: str
    count: int
    limit: int


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


def replay_calls(calls: Iterable[ToolCall], guard: Guard) -> list[AgentReplay]:
    """Every call through ``guard`` (each run's agents are separate), in order of arrival.

    Results are reported to the guard after allowed calls, as an adapter would.
    """
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
    decision = guard.check(call.tool, call.args, identity)
    if decision.allowed:
        if call.result is not None or call.ok is not None:
            guard.record_result(call.tool, call.args, call.result, identity, ok=call.ok)
        return
    report.saved += 1
    kind = decision.kind or "unknown"
    report.denials.append(
        ReplayDenial(call.step, call.agent, call.tool, kind, decision.count, decision.limit)
    )
    if decision.escalate:
        report.escalated_at = call.step
