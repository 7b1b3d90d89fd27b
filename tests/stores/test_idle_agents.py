"""An agent idle past ``agent_idle_seconds`` is forgotten on both stores, whenever it returns."""

from __future__ import annotations

import time

from tests.store_fixtures import GuardFactory


def test_an_agent_back_after_its_idle_time_starts_afresh(make_guard: GuardFactory) -> None:
    guard = make_guard({"duplicate": {"limit": 2}, "guard": {"agent_idle_seconds": 0.3}})
    assert [guard.check("read", {"p": 1}, "a").allowed for _ in range(3)] == [True, True, False]
    time.sleep(0.5)
    assert guard.check("read", {"p": 1}, "a").allowed  # not kept until a sweep runs
