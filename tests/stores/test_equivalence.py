"""Random interleavings of calls over several agents: Redis decides exactly as memory does."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, rule, run_state_machine_as_test

from loopfuse import Decision, Guard
from loopfuse.listeners import GuardListener

from .conftest import RedisServer, unique_prefix

CONFIG = {
    "circuit_breaker": {"duplicate_limit": 3, "window": 5, "max_calls_per_agent": 14},
    "loop_brake": {"max_repeats": 2},
    "guard": {"abort_after_denials": 3},
}
AGENTS = st.sampled_from(["a", "b", "c"])


class LastFirst(GuardListener):
    def __init__(self) -> None:
        self.first: bool | None = None

    def on_deny(self, decision: Decision, agent: Any, first: bool) -> None:
        self.first = first


def answer(guard: Guard, listener: LastFirst, tool: str, args: Any, agent: str) -> tuple[Any, ...]:
    listener.first = None
    d = guard.check(tool, args, agent)
    return d.allowed, d.kind, d.count, d.limit, d.escalate, d.message, listener.first


@pytest.fixture
def server(redis_server: RedisServer) -> RedisServer:
    return redis_server


def test_memory_and_redis_agree(server: RedisServer) -> None:
    class SameDecisions(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            store = {"url": server.url, "prefix": unique_prefix()}
            self.memory = Guard.from_config(CONFIG)
            self.redis = Guard.from_config({**CONFIG, "store": store})
            self.listeners = (LastFirst(), LastFirst())
            self.memory.listeners.append(self.listeners[0])
            self.redis.listeners.append(self.listeners[1])

        @rule(agent=AGENTS, tool=st.sampled_from(["read", "grep"]), arg=st.integers(0, 4))
        def call(self, agent: str, tool: str, arg: int) -> None:
            args = {"n": 3, "reason": "ignored"} if arg == 4 else {"n": arg}  # same window key as 3
            expected = answer(self.memory, self.listeners[0], tool, args, agent)
            assert answer(self.redis, self.listeners[1], tool, args, agent) == expected

        @rule(agent=AGENTS, times=st.integers(2, 5))
        def repeat(self, agent: str, times: int) -> None:
            for _ in range(times):
                self.call(agent, "read", 0)

        @rule(agent=AGENTS)
        def forget(self, agent: str) -> None:
            self.memory.forget(agent)
            self.redis.forget(agent)

        def teardown(self) -> None:
            self.redis.close()

    limits = settings(
        max_examples=40, stateful_step_count=40, deadline=None, suppress_health_check=list(HealthCheck)
    )
    run_state_machine_as_test(SameDecisions, settings=limits)
