"""Random interleavings of calls and results over several agents: Redis decides exactly as
memory does, with each result sent along with the agent's next check (one round trip per tool
call), by a flush, or by the store's flusher thread racing the checks."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, rule, run_state_machine_as_test

from loopfuse import Decision, Guard
from loopfuse.listeners import GuardListener
from tests.store_fixtures import RedisServer, unique_prefix

CONFIG = {
    "circuit_breaker": {"duplicate_limit": 3, "window": 5, "max_calls_per_agent": 14},
    "loop_brake": {"max_repeats": 2},
    "guard": {"abort_after_denials": 3},
}
AGENTS = st.sampled_from(["a", "b", "c"])
# A round trip may take this long: on a loaded 2-core machine redis-server can stall past the
# default 0.25 s, and the check would fail open, which this test would take for a decision
# that differs (the store's own failure handling has tests of its own: test_faults.py).
SLOW_MACHINE = 5.0
# Every breaker at small limits, with results; a window of 6 drops old results.
RESULTS_CONFIG = {
    "circuit_breaker": {
        "duplicate_limit": 3,
        "window": 6,
        "max_calls_per_agent": 40,
        "result_limit": 4,
        "same_result_limit": 3,
        "progress_limit": 6,
        "warn_at": 2,
    },
    "loop_brake": {"max_repeats": 2, "result_aware": True, "warn_at": 1},
    "same_error": {"limit": 3, "identical_limit": 2, "warn_at": 1},
    "stall": {"limit": 2, "error_limit": 2, "tool_error_limit": 3, "window": 3, "warn_at": 1},
    "near_duplicate": {"limit": 2, "window": 5, "warn_at": 1},
    "cycle": {"max_period": 3, "min_repeats": 2},
    "tools": {"grep": {"duplicate_limit": 2, "near_duplicate_limit": 3}},
    "invalid": {"limit": 2},
    "failures": {"limit": 3, "trials": 1, "warn_at": 2},
    "guard": {"abort_after_denials": 4},
}
# near_duplicate and cycle counting calls whose results are unknown too, or ignoring results;
# batch tools (exact near-duplicate keys, runs of errors per identical call).
# Each with a [store] result_flush_delay: 60 s, results go only with the agent's next check or a
# flush; 1 ms, the flusher thread sends some of them, racing the checks.
DELAYS = {"defaults": 60, "without_results_too": 0.001, "results_ignored": 60, "batch_tools": 0.001}
# Whether the store runs its scripts as a Function library (FCALL) or as EVALSHA; the other
# process on the same agents runs them the other way.
FUNCTIONS = {"defaults": True, "without_results_too": False, "results_ignored": True, "batch_tools": False}
VARIANTS: dict[str, dict[str, Any]] = {
    "defaults": {},
    "without_results_too": {
        "near_duplicate": {"limit": 3, "window": 4, "only_with_results": False},
        "cycle": {"max_period": 3, "min_repeats": 2, "only_with_results": False},
    },
    "results_ignored": {
        "near_duplicate": {"limit": 2, "window": 3, "only_with_results": False, "result_aware": False},
        "cycle": {"max_period": 2, "min_repeats": 2, "only_with_results": False, "result_aware": False},
    },
    "batch_tools": {
        "tools": {
            "grep": {"duplicate_limit": 2, "near_duplicate_limit": 3, "batch": True},
            "edit": {"batch": True},
        }
    },
}
# Numbers (one near-duplicate key, arg 4 also one window key with 3), names (cycles), and
# arguments too long for a near-duplicate key.
ARGS = st.sampled_from([0, 3, 4, "alpha", "beta", "gamma", "long"])
TOOLS = st.sampled_from(["read", "grep", "edit"])
OUTPUTS = st.sampled_from(["same", "new", "per call", "error", "other error", "unknown"])


class LastFirst(GuardListener):
    def __init__(self) -> None:
        self.first: bool | None = None

    def on_deny(self, decision: Decision, agent: Any, first: bool) -> None:
        self.first = first


def answer(guard: Guard, listener: LastFirst, tool: str, args: Any, agent: str) -> tuple[Any, ...]:
    listener.first = None
    return seen(guard.check(tool, args, agent), listener)


def seen(d: Decision, listener: LastFirst) -> tuple[Any, ...]:
    return d.allowed, d.kind, d.count, d.limit, d.escalate, d.message, d.warning, listener.first


def call_args(arg: int | str) -> dict[str, Any]:
    if arg == "long":
        return {"text": "x" * 2100}
    if isinstance(arg, str):
        return {"path": arg}
    return {"n": 3, "reason": "ignored"} if arg == 4 else {"n": arg}  # same window key as 3


class Outputs:
    """The result a call returns: the same each time, new each time, or an error."""

    def __init__(self) -> None:
        self.fresh = 0

    def report(self, guard: Guard, tool: str, args: Any, agent: str, output: str) -> None:
        result, ok = self.result(tool, args, output)
        guard.record_result(tool, args, result, agent, ok=ok)

    def result(self, tool: str, args: Any, output: str) -> tuple[str, bool | None]:
        """What the call returned, and whether it failed (None: the host does not say)."""
        if output == "new":
            self.fresh += 1
            return f"page {self.fresh}", True
        if output == "per call":
            return f"what {tool} {args} returns", True
        if output == "unknown":
            return "done", None
        if output.endswith("error"):
            return f"{output} at line {self.fresh}", False
        return "same output", True


@pytest.fixture
def server(redis_server: RedisServer) -> RedisServer:
    return redis_server


def test_memory_and_redis_agree(server: RedisServer) -> None:
    class SameDecisions(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            store = {"url": server.url, "prefix": unique_prefix(), "timeout": SLOW_MACHINE}
            self.memory = Guard.from_config(CONFIG)
            self.redis = Guard.from_config({**CONFIG, "store": store})
            self.listeners = (LastFirst(), LastFirst())
            self.memory.listeners.append(self.listeners[0])
            self.redis.listeners.append(self.listeners[1])

        @rule(agent=AGENTS, tool=st.sampled_from(["read", "grep"]), arg=st.integers(0, 4))
        def call(self, agent: str, tool: str, arg: int) -> None:
            args = call_args(arg)
            expected = answer(self.memory, self.listeners[0], tool, args, agent)
            got = answer(self.redis, self.listeners[1], tool, args, agent)
            assert got == expected, self.redis.stats()["fail_open"]  # a fail-open is named

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


@pytest.mark.parametrize("variant", list(VARIANTS))
@pytest.mark.slow
def test_memory_and_redis_agree_with_results(server: RedisServer, variant: str) -> None:
    config = {**RESULTS_CONFIG, **VARIANTS[variant]}

    class SameDecisionsWithResults(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            store = {
                "url": server.url,
                "prefix": unique_prefix(),
                "result_flush_delay": DELAYS[variant],
                "timeout": SLOW_MACHINE,
                "redis_functions": FUNCTIONS[variant],
            }
            self.guards = (Guard.from_config(config), Guard.from_config({**config, "store": store}))
            # Another process on the same agents that checks but never receives a result.
            other = {**store, "redis_functions": not FUNCTIONS[variant]}
            self.elsewhere = Guard.from_config({**config, "store": other})
            self.listeners = (LastFirst(), LastFirst())
            self.outputs = Outputs()
            for guard, listener in zip(self.guards, self.listeners, strict=True):
                guard.listeners.append(listener)
            self.elsewhere.listeners.append(self.listeners[1])

        def both(self, tool: str, args: Any, agent: str, output: str | None) -> None:
            """Check on both stores (same answer), then report the same result to both."""
            answers = [
                answer(g, lis, tool, args, agent) for g, lis in zip(self.guards, self.listeners, strict=True)
            ]
            assert answers[1] == answers[0], self.guards[1].stats()["fail_open"]  # a fail-open is named
            if output is not None:
                self.report(tool, args, agent, output)

        def report(self, tool: str, args: Any, agent: str, output: str) -> None:
            fresh = self.outputs.fresh
            for guard in self.guards:
                self.outputs.fresh = fresh  # a "new" output is the same new one on both stores
                self.outputs.report(guard, tool, args, agent, output)

        @rule(agent=AGENTS, tool=TOOLS, arg=ARGS, output=OUTPUTS)
        def call_and_report(self, agent: str, tool: str, arg: int | str, output: str) -> None:
            self.both(tool, call_args(arg), agent, output)  # reported even when denied

        @rule(agent=AGENTS, tool=TOOLS, arg=ARGS)
        def call_without_result(self, agent: str, tool: str, arg: int | str) -> None:
            self.both(tool, call_args(arg), agent, None)

        @rule(agent=AGENTS, tool=TOOLS, arg=ARGS, output=OUTPUTS)
        def report_again(self, agent: str, tool: str, arg: int | str, output: str) -> None:
            self.report(tool, call_args(arg), agent, output)  # twice, late, or never checked

        @rule(agent=AGENTS, arg=ARGS, output=OUTPUTS, times=st.integers(2, 7))
        def same_call_in_a_row(self, agent: str, arg: int | str, output: str, times: int) -> None:
            for i in range(times):  # with arg 3 or 4: one window key, alternating full digests
                self.both("read", call_args(3 + i % 2 if arg in (3, 4) else arg), agent, output)

        @rule(
            agent=AGENTS,
            block=st.lists(st.tuples(TOOLS, ARGS), min_size=2, max_size=3),
            rounds=st.integers(2, 4),
            output=st.none() | OUTPUTS,
        )
        def block_again_and_again(
            self, agent: str, block: list[tuple[str, int | str]], rounds: int, output: str | None
        ) -> None:
            for _ in range(rounds):  # A,B,A,B,... (a cycle when the block's calls are distinct)
                for tool, arg in block:
                    self.both(tool, call_args(arg), agent, output)

        @rule(agent=AGENTS, calls=st.lists(st.tuples(TOOLS, ARGS, OUTPUTS), min_size=2, max_size=6))
        def parallel_calls(self, agent: str, calls: list[tuple[str, int | str, str]]) -> None:
            for tool, arg, _ in calls:  # one turn: every call checked, then every result reported
                self.both(tool, call_args(arg), agent, None)
            for tool, arg, output in calls:
                self.report(tool, call_args(arg), agent, output)

        @rule(agent=AGENTS, tool=TOOLS, arg=ARGS)
        def check_elsewhere(self, agent: str, tool: str, arg: int | str) -> None:
            args = call_args(arg)
            expected = answer(self.guards[0], self.listeners[0], tool, args, agent)
            self.guards[1].flush()  # another process sees this one's results once they are sent
            got = answer(self.elsewhere, self.listeners[1], tool, args, agent)
            assert got == expected, self.elsewhere.stats()["fail_open"]

        @rule()
        def flush(self) -> None:
            self.guards[1].flush()

        @rule(agent=AGENTS)
        def invalid_turn(self, agent: str) -> None:
            answers = []
            for guard, listener in zip(self.guards, self.listeners, strict=True):
                listener.first = None
                answers.append(seen(guard.note_invalid(agent), listener))
            assert answers[1] == answers[0]

        @rule(agent=AGENTS)
        def forget(self, agent: str) -> None:
            for guard in self.guards:
                guard.forget(agent)

        def teardown(self) -> None:
            self.guards[1].close()
            self.elsewhere.close()

    limits = settings(
        max_examples=50, stateful_step_count=50, deadline=None, suppress_health_check=list(HealthCheck)
    )
    run_state_machine_as_test(SameDecisionsWithResults, settings=limits)
