"""Listener hooks and the one warning per first denial, with no argument values anywhere."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest

from loopfuse import Decision, Guard
from loopfuse.listeners import GuardListener
from loopfuse.testing import RecordingListener

CANARY = "CANARY-91c2d7"


def seen(rec: RecordingListener) -> list[tuple[Any, ...]]:
    """The hook calls other than ``on_check``, in order, as short tuples."""
    out: list[tuple[Any, ...]] = []
    for e in rec.events:
        if e.hook in ("on_deny", "on_escalate"):
            assert e.decision is not None
            details = (e.decision.count, e.agent, e.first) if e.hook == "on_deny" else (e.agent,)
            out.append((e.hook[3:], e.decision.kind, *details))
        elif e.hook == "on_fail_open":
            out.append(("fail_open", e.reason, e.tool, e.agent))
    return out


class Broken(GuardListener):
    def on_check(self, decision: Decision, agent: Any) -> None:
        raise RuntimeError("listener bug")

    def on_deny(self, decision: Decision, agent: Any, first: bool) -> None:
        raise RuntimeError("listener bug")


def guard_with(*listeners: GuardListener, **cb: Any) -> Guard:
    config = {"circuit_breaker": {"duplicate_limit": 1, **cb}, "guard": {"abort_after_denials": 3}}
    return Guard.from_config(config, listeners=listeners)


def test_custom_listener_sees_denials_escalation_and_fail_open() -> None:
    rec = RecordingListener()
    guard = guard_with(rec)
    for _ in range(4):  # allowed, then three denials in a row: the third escalates
        guard.check("search", {"q": CANARY}, "w1")
    guard.check("search", {"q": 1j}, "w1")  # a complex number cannot be serialized
    assert seen(rec) == [
        ("deny", "duplicate", 1, "w1", True),
        ("deny", "duplicate", 1, "w1", False),
        ("deny", "duplicate", 1, "w1", False),
        ("escalate", "duplicate", "w1"),
        ("fail_open", "unserializable", "search", "w1"),
    ]


def test_default_listener_does_nothing() -> None:
    guard = guard_with(GuardListener())
    assert [guard.check("t", {}, "a").allowed for _ in range(3)] == [True, False, False]


def test_raising_listener_does_not_break_the_guard(caplog: pytest.LogCaptureFixture) -> None:
    rec = RecordingListener()
    guard = guard_with(Broken(), rec)
    results = [guard.check("t", {}, "a").allowed for _ in range(3)]
    assert results == [True, False, False]
    assert [e[0] for e in seen(rec)] == ["deny", "deny"]  # later listeners still called
    assert "listener" in caplog.text and "failed in on_deny" in caplog.text


def test_one_warning_per_first_denial_without_argument_values(
    caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    guard = guard_with(incident_log=str(tmp_path / "incidents.jsonl"))
    caplog.set_level(logging.DEBUG, logger="loopfuse")
    args = {"query": CANARY, "description": CANARY}
    for agent in ("a", "a", "a", "b", "b"):
        guard.check("web_search", args, agent)
    warnings = [r for r in caplog.records if r.name == "loopfuse" and r.levelno == logging.WARNING]
    assert [r.getMessage() for r in warnings] == [
        "loopfuse denied web_search for agent a: duplicate (1/1)",
        "loopfuse denied web_search for agent b: duplicate (1/1)",
    ]
    assert CANARY not in caplog.text
    assert CANARY not in (tmp_path / "incidents.jsonl").read_text()


def test_object_agent_is_logged_without_its_attribute_values(caplog: pytest.LogCaptureFixture) -> None:
    class Session:
        def __init__(self) -> None:
            self.secret = CANARY

    guard = guard_with()
    session = Session()
    caplog.set_level(logging.WARNING, logger="loopfuse")
    guard.check("t", {}, session)
    guard.check("t", {}, session)
    assert "for agent <object>" in caplog.text
    assert CANARY not in caplog.text


class FailOpens(GuardListener):
    """Records ``on_fail_open`` and ``on_unjudged_check``, in order."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str, str]] = []

    def on_fail_open(self, reason: str, tool: str, agent: Any) -> None:
        self.calls.append(("fail_open", reason, tool))

    def on_unjudged_check(self, reason: str, tool: str, agent: Any) -> None:
        self.calls.append(("unjudged_check", reason, tool))


def test_on_unjudged_check_follows_on_fail_open_only_for_a_check() -> None:
    listener = FailOpens()
    guard = guard_with(listener)
    guard.check("search", {"q": 1j}, "w1")  # a check: allowed unjudged
    guard.record_result("search", {"q": 1j}, "r", "w1")  # a result: not a check
    guard.note_invalid({"id": "x"})  # an invalid turn that cannot be keyed: not a check
    guard.check("f", {}, {"id": "x"})  # a check
    assert listener.calls == [
        ("fail_open", "unserializable", "search"),
        ("unjudged_check", "unserializable", "search"),
        ("fail_open", "unserializable", "search"),
        ("fail_open", "agent_identity", "<invalid turn>"),
        ("fail_open", "agent_identity", "f"),
        ("unjudged_check", "agent_identity", "f"),
    ]
    stats = guard.stats()
    assert stats["checks"] == 2 and sum(stats["fail_open"].values()) == 4


class Once(GuardListener):
    """A listener that removes itself from the guard's listeners at its first check."""

    def __init__(self, guard_listeners: list[Any]) -> None:
        self.listeners = guard_listeners

    def on_check(self, decision: Decision, agent: Any) -> None:
        self.listeners.remove(self)


def test_a_listener_removing_itself_leaves_the_next_one_its_event() -> None:
    recorder = RecordingListener()
    guard = Guard(listeners=[recorder])
    guard.listeners.insert(0, Once(guard.listeners))
    guard.check("search", {"q": "a"}, "a")
    assert len(recorder.of("on_check")) == 1
