"""A real guard writes the incident log; a parent's supervisor acts on it (the docs' pattern)."""

from __future__ import annotations

from pathlib import Path

from loopfuse import Guard
from loopfuse.supervise import Supervisor
from loopfuse.testing import FakeClock

CANARY = "CANARY-e2e-0b7d"


class Parent:
    """Sub-agents are scripted: a looping one repeats one search; a healthy one delivers."""

    def __init__(self, log: Path, clock: FakeClock, guard: Guard) -> None:
        self.guard = guard
        self.briefs: dict[str, str] = {}
        self.running: set[str] = set()
        self.log: list[str] = []
        self.supervisor = Supervisor(
            log,
            interrupt=self.interrupt,
            redispatch=self.redispatch,
            give_up=self.give_up,
            grace=180,
            clock=clock,
        )

    def dispatch(self, agent: str, brief: str) -> None:
        self.briefs[agent] = brief
        self.running.add(agent)

    def interrupt(self, agent: str) -> None:
        self.running.discard(agent)
        self.log.append(f"interrupt {agent}")

    def redispatch(self, agent: str, note: str) -> str:
        new_id = f"{agent}-retry"
        self.dispatch(new_id, self.briefs[agent] + "\n\n" + note)
        self.log.append(f"redispatch {agent} as {new_id}")
        return new_id

    def give_up(self, agent: str, note: str) -> None:
        self.log.append(f"give up {agent}")

    def step_sub_agents(self) -> None:
        for agent in sorted(self.running):
            if "unanswerable" in self.briefs[agent]:
                self.guard.check("web_search", {"query": CANARY}, agent)  # loops forever
            else:
                self.running.discard(agent)
                self.supervisor.delivered(agent)


def test_looping_item_is_retried_once_then_recorded_as_a_gap(tmp_path: Path) -> None:
    log = tmp_path / "incidents.jsonl"
    guard = Guard.from_config({"circuit_breaker": {"duplicate_limit": 6, "incident_log": str(log)}})
    clock = FakeClock()
    parent = Parent(log, clock, guard)
    parent.dispatch("w1", "find the unanswerable figure")
    parent.dispatch("w2", "summarize the report")
    for _ in range(60):  # one parent turn every 10 seconds for 10 minutes
        for _ in range(3):
            parent.step_sub_agents()
        parent.supervisor.poll()
        clock.advance(10)
    parent.supervisor.close()
    guard.close()
    assert parent.log == [
        "interrupt w1",
        "redispatch w1 as w1-retry",
        "interrupt w1-retry",
        "give up w1-retry",
    ]
    (gap,) = parent.supervisor.gaps
    assert (gap.item, gap.agent) == ("w1", "w1-retry")
    assert "exhausted" in parent.briefs["w1-retry"]
    assert CANARY not in parent.briefs["w1-retry"] + gap.note


def test_a_run_forgotten_by_its_own_interrupt_callback_ends_the_poll_quietly(tmp_path: Path) -> None:
    log = tmp_path / "incidents.jsonl"
    log.touch()
    interrupted: list[str] = []

    def interrupt(agent: str) -> None:
        interrupted.append(agent)
        supervisor.forget(agent)  # the host stopped the run: nothing left to keep for it

    supervisor = Supervisor(log, interrupt=interrupt, redispatch=lambda agent, note: None, grace=0)
    guard = Guard.from_config({"duplicate": {"limit": 2}, "guard": {"incident_log": str(log)}})
    for _ in range(3):
        guard.check("search", {"q": "x"}, agent="w2")
    assert [a.kind for a in supervisor.poll()] == ["interrupt", "redispatch"]
    assert interrupted == ["w2"]
    supervisor.close()
