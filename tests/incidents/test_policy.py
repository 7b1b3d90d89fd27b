"""The supervision policy, driven through the incident log with a fake clock."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from loopfuse.supervise import Supervisor, SupervisorPolicy, Trip
from loopfuse.testing import FakeClock

from .conftest import append, incident_line

GRACE = 120.0
OPEN: list[Supervisor] = []


@pytest.fixture(autouse=True)
def close_supervisors() -> Iterator[None]:
    """A supervisor keeps its incident log open until ``close``: close each one a test made."""
    yield
    while OPEN:
        OPEN.pop().close()


def opened(supervisor: Supervisor) -> Supervisor:
    OPEN.append(supervisor)
    return supervisor


class Host:
    """Records what the supervisor asked for; re-dispatched runs get ids from ``new_ids``."""

    def __init__(self, new_ids: list[str | None] | None = None) -> None:
        self.calls: list[tuple[str, ...]] = []
        self.new_ids = list(new_ids or [])

    def interrupt(self, agent: str) -> None:
        self.calls.append(("interrupt", agent))

    def redispatch(self, agent: str, note: str) -> str | None:
        self.calls.append(("redispatch", agent, note))
        return self.new_ids.pop(0) if self.new_ids else None

    def give_up(self, agent: str, note: str) -> None:
        self.calls.append(("give_up", agent, note))

    def kinds(self) -> list[tuple[str, str]]:
        return [(c[0], c[1]) for c in self.calls]


def supervisor(log: Path, clock: FakeClock, host: Host, **kwargs: Any) -> Supervisor:
    log.touch()
    return opened(
        Supervisor(
            log,
            interrupt=host.interrupt,
            redispatch=host.redispatch,
            give_up=host.give_up,
            grace=GRACE,
            clock=clock,
            **kwargs,
        )
    )


def test_tripped_agent_is_interrupted_only_after_grace(log: Path, clock: FakeClock) -> None:
    host = Host()
    sup = supervisor(log, clock, host)
    append(log, incident_line("researcher-1"))
    assert sup.poll() == []
    clock.advance(GRACE - 1)
    assert sup.poll() == []
    assert host.calls == []
    clock.advance(1)
    sup.poll()
    assert host.kinds() == [("interrupt", "researcher-1"), ("redispatch", "researcher-1")]


def test_grace_counts_from_when_the_supervisor_first_reads_the_incident(log: Path, clock: FakeClock) -> None:
    host = Host()
    sup = supervisor(log, clock, host)
    append(log, incident_line("a"))
    clock.advance(10 * GRACE)  # written long ago, but not read yet
    sup.poll()
    assert host.calls == []
    clock.advance(GRACE)
    sup.poll()
    assert host.kinds()[0] == ("interrupt", "a")


def test_redispatch_note_says_the_line_is_exhausted_without_argument_values(
    log: Path, clock: FakeClock
) -> None:
    host = Host()
    sup = supervisor(log, clock, host)
    append(log, incident_line("a", tool="web_search", args={"query": "CANARY-7f3a"}))
    sup.poll()
    clock.advance(GRACE)
    sup.poll()
    note = host.calls[1][2]
    assert "exhausted" in note and "web_search" in note
    assert "CANARY" not in note


def test_redispatch_happens_once_per_work_item(log: Path, clock: FakeClock) -> None:
    host = Host()
    sup = supervisor(log, clock, host)
    append(log, incident_line("a"))
    sup.poll()
    clock.advance(GRACE)
    sup.poll()
    clock.advance(10 * GRACE)
    sup.poll()
    assert [c[0] for c in host.calls] == ["interrupt", "redispatch"]


def test_second_trip_under_the_same_id_gives_up_and_records_the_gap(log: Path, clock: FakeClock) -> None:
    host = Host()
    sup = supervisor(log, clock, host)
    append(log, incident_line("a", kind="duplicate"))
    sup.poll()
    clock.advance(GRACE)
    sup.poll()
    append(log, incident_line("a", kind="cap", tool="bash"))
    sup.poll()
    assert len(host.calls) == 2
    clock.advance(GRACE)
    sup.poll()
    assert host.kinds()[2:] == [("interrupt", "a"), ("give_up", "a")]
    assert [g.item for g in sup.gaps] == ["a"]
    assert [t.kind for t in sup.gaps[0].trips] == ["duplicate", "cap"]
    assert "twice" in host.calls[3][2]


def test_second_trip_via_the_id_returned_by_redispatch(log: Path, clock: FakeClock) -> None:
    host = Host(new_ids=["a-retry"])
    sup = supervisor(log, clock, host)
    append(log, incident_line("a"))
    sup.poll()
    clock.advance(GRACE)
    sup.poll()
    append(log, incident_line("a-retry"))
    sup.poll()
    clock.advance(GRACE)
    sup.poll()
    assert host.kinds() == [
        ("interrupt", "a"),
        ("redispatch", "a"),
        ("interrupt", "a-retry"),
        ("give_up", "a-retry"),
    ]
    assert sup.gaps[0].item == "a" and sup.gaps[0].agent == "a-retry"
    assert sup.policy.item_of("a-retry") == "a"


def test_further_incidents_of_the_same_run_do_not_restart_its_grace(log: Path, clock: FakeClock) -> None:
    host = Host(new_ids=["b"])
    sup = supervisor(log, clock, host)
    append(log, incident_line("a", kind="duplicate"))
    sup.poll()
    clock.advance(GRACE / 2)
    append(log, incident_line("a", kind="cap"))
    sup.poll()
    clock.advance(GRACE / 2)
    sup.poll()
    assert host.kinds() == [("interrupt", "a"), ("redispatch", "a")]


def test_delivered_agent_is_left_alone(log: Path, clock: FakeClock) -> None:
    host = Host()
    sup = supervisor(log, clock, host)
    append(log, incident_line("a"))
    sup.poll()
    clock.advance(GRACE / 2)
    sup.delivered("a")
    clock.advance(10 * GRACE)
    assert sup.poll() == []
    assert host.calls == [] and sup.gaps == []


def test_agent_delivered_before_its_incident_is_read_is_left_alone(log: Path, clock: FakeClock) -> None:
    host = Host()
    sup = supervisor(log, clock, host)
    sup.delivered("a")
    append(log, incident_line("a"))
    sup.poll()
    clock.advance(10 * GRACE)
    sup.poll()
    assert host.calls == []


def test_redispatched_run_that_delivers_after_tripping_closes_no_gap(log: Path, clock: FakeClock) -> None:
    host = Host(new_ids=["b"])
    sup = supervisor(log, clock, host)
    append(log, incident_line("a"))
    sup.poll()
    clock.advance(GRACE)
    sup.poll()
    append(log, incident_line("b"))
    sup.poll()
    sup.delivered("b")
    clock.advance(10 * GRACE)
    sup.poll()
    assert [c[0] for c in host.calls] == ["interrupt", "redispatch"]
    assert sup.gaps == []


def test_agents_are_supervised_independently(log: Path, clock: FakeClock) -> None:
    host = Host(new_ids=["a2", "b2"])
    sup = supervisor(log, clock, host)
    append(log, incident_line("a"))
    sup.poll()
    clock.advance(GRACE / 2)
    append(log, incident_line("b"))
    sup.poll()
    clock.advance(GRACE / 2)
    sup.poll()
    assert host.kinds() == [("interrupt", "a"), ("redispatch", "a")]
    clock.advance(GRACE / 2)
    sup.poll()
    assert host.kinds()[2:] == [("interrupt", "b"), ("redispatch", "b")]


def test_without_redispatch_an_item_is_given_up_on_its_first_trip(log: Path, clock: FakeClock) -> None:
    host = Host()
    log.touch()
    sup = opened(Supervisor(log, interrupt=host.interrupt, give_up=host.give_up, grace=GRACE, clock=clock))
    append(log, incident_line("a"))
    sup.poll()
    clock.advance(GRACE)
    sup.poll()
    assert host.kinds() == [("interrupt", "a"), ("give_up", "a")]
    assert "cannot be re-dispatched" in host.calls[1][2]


def test_raising_callback_is_logged_and_the_policy_moves_on(
    log: Path, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    host = Host()

    def broken_interrupt(agent: str) -> None:
        raise RuntimeError("host bug")

    log.touch()
    sup = opened(
        Supervisor(log, interrupt=broken_interrupt, redispatch=host.redispatch, grace=GRACE, clock=clock)
    )
    append(log, incident_line("a"))
    sup.poll()
    clock.advance(GRACE)
    actions = sup.poll()
    assert [a.kind for a in actions] == ["interrupt", "redispatch"]
    assert host.kinds() == [("redispatch", "a")]
    assert "supervisor callback interrupt failed" in caplog.text


def test_incidents_without_an_agent_id_are_counted_not_acted_on(log: Path, clock: FakeClock) -> None:
    host = Host()
    sup = supervisor(log, clock, host)
    append(log, '{"time": "t", "kind": "cap", "tool": "bash", "count": 3, "limit": 3, "agent_keys": ["x"]}\n')
    sup.poll()
    clock.advance(10 * GRACE)
    sup.poll()
    assert host.calls == [] and sup.unidentified == 1


def test_incidents_already_in_the_file_are_ignored_unless_asked(log: Path, clock: FakeClock) -> None:
    append(log, incident_line("old"))
    for from_start, expected in ((False, []), (True, [("interrupt", "old"), ("redispatch", "old")])):
        host = Host()
        sup = supervisor(log, clock, host, from_start=from_start)
        sup.poll()
        clock.advance(GRACE)
        sup.poll()
        sup.close()
        assert host.kinds() == expected


def test_log_created_after_the_supervisor_is_read_from_its_start(log: Path, clock: FakeClock) -> None:
    host = Host()
    sup = opened(Supervisor(log, interrupt=host.interrupt, grace=GRACE, clock=clock))
    assert sup.poll() == []
    append(log, incident_line("a"))
    sup.poll()
    clock.advance(GRACE)
    sup.poll()
    assert host.kinds()[0] == ("interrupt", "a")


def test_next_due_says_when_to_poll_again(log: Path, clock: FakeClock) -> None:
    sup = supervisor(log, clock, Host())
    assert sup.policy.next_due(clock()) is None
    append(log, incident_line("a"))
    sup.poll()
    clock.advance(20)
    assert sup.policy.next_due(clock()) == GRACE - 20


async def test_run_loop_awaits_async_callbacks(log: Path) -> None:
    seen: list[tuple[str, str]] = []

    async def interrupt(agent: str) -> None:
        seen.append(("interrupt", agent))

    async def redispatch(agent: str, note: str) -> str:
        seen.append(("redispatch", agent))
        return agent + "-2"

    log.touch()
    sup = opened(Supervisor(log, interrupt=interrupt, redispatch=redispatch, grace=0.05))
    task = asyncio.create_task(sup.run(interval=0.02))
    append(log, incident_line("a"))
    for _ in range(100):
        await asyncio.sleep(0.02)
        if len(seen) == 2:
            break
    sup.stop()
    await asyncio.wait_for(task, 2)
    assert seen == [("interrupt", "a"), ("redispatch", "a")]
    assert sup.policy.item_of("a-2") == "a"


def test_sync_poll_with_async_callback_logs_and_does_not_leak_coroutines(
    log: Path, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    async def interrupt(agent: str) -> None:
        raise AssertionError("never awaited")

    log.touch()
    sup = opened(Supervisor(log, interrupt=interrupt, grace=GRACE, clock=clock))
    append(log, incident_line("a"))
    sup.poll()
    clock.advance(GRACE)
    sup.poll()
    assert "use Supervisor.apoll or run" in caplog.text


def test_policy_returns_each_due_action_once() -> None:
    policy = SupervisorPolicy(grace=10)
    policy.tripped(Trip("a", "cap", "bash", 3, 3), now=0)
    assert policy.due(now=9) == []
    first = policy.due(now=10)
    assert [a.kind for a in first] == ["interrupt", "redispatch"]
    assert policy.due(now=11) == []  # claimed, even before the host reports back
    assert policy.next_due(now=11) is None


def test_delivered_from_other_threads_while_polling(log: Path, clock: FakeClock) -> None:
    host = Host()
    sup = supervisor(log, clock, host)
    append(log, "".join(incident_line(f"w{i}") for i in range(200)))
    workers = [threading.Thread(target=sup.delivered, args=(f"w{i}",)) for i in range(0, 200, 2)]
    for w in workers:
        w.start()
    sup.poll()
    for w in workers:
        w.join(timeout=10)
    clock.advance(GRACE)
    sup.poll()
    interrupted = {c[1] for c in host.calls if c[0] == "interrupt"}
    assert interrupted == {f"w{i}" for i in range(1, 200, 2)}


async def test_stop_before_the_run_loop_starts_ends_it_at_once(log: Path) -> None:
    sup = opened(Supervisor(log))
    task = asyncio.create_task(sup.run(interval=0.05))
    sup.stop()  # the task has not started yet
    await asyncio.wait_for(task, 1)
    again = asyncio.create_task(sup.run(interval=0.01))  # a stopped supervisor can run again
    await asyncio.sleep(0.05)
    assert not again.done()
    sup.stop()
    await asyncio.wait_for(again, 1)


@pytest.mark.parametrize("grace", [float("nan"), float("inf"), float("-inf"), -1.0])
def test_grace_that_is_not_a_finite_number_of_seconds_is_refused(log: Path, grace: float) -> None:
    with pytest.raises(
        ValueError, match=rf"grace must be a finite number of seconds at least 0, got {grace!r}"
    ):
        Supervisor(log, grace=grace)
    with pytest.raises(ValueError, match="grace"):
        SupervisorPolicy(grace)


@pytest.mark.parametrize("interval", [float("nan"), float("inf"), 0.0, -1.0])
async def test_run_interval_that_is_not_a_number_of_seconds_above_zero_is_refused(
    log: Path, interval: float
) -> None:
    sup = opened(Supervisor(log))
    with pytest.raises(
        ValueError, match=rf"interval must be a finite number of seconds above 0, got {interval!r}"
    ):
        await asyncio.wait_for(sup.run(interval=interval), 1)
