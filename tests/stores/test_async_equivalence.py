"""A host on asyncio (``acheck`` and ``arecord_result``, as every async adapter calls them) gets
from Redis exactly the decisions a host gets in process, whatever its calls and results."""

from __future__ import annotations

import asyncio
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loopfuse import Decision, Guard
from tests.store_fixtures import RedisServer, unique_prefix
from tests.stores.test_equivalence import (
    AGENTS,
    ARGS,
    OUTPUTS,
    RESULTS_CONFIG,
    SLOW_MACHINE,
    TOOLS,
    Outputs,
    call_args,
)

STEPS = st.lists(st.tuples(AGENTS, TOOLS, ARGS, OUTPUTS), min_size=1, max_size=30)
Step = tuple[str, str, Any, str]


def summary(d: Decision) -> tuple[Any, ...]:
    return d.allowed, d.kind, d.count, d.limit, d.escalate, d.message, d.warning


def in_process(steps: list[Step]) -> list[tuple[Any, ...]]:
    guard, outputs, seen = Guard.from_config(RESULTS_CONFIG), Outputs(), []
    for agent, tool, arg, output in steps:
        decision = guard.check(tool, call_args(arg), agent)
        seen.append(summary(decision))
        if decision.allowed:
            outputs.report(guard, tool, call_args(arg), agent, output)
    return seen


async def on_redis(url: str, steps: list[Step]) -> list[tuple[Any, ...]]:
    store = {"url": url, "prefix": unique_prefix(), "timeout": SLOW_MACHINE}
    guard, outputs, seen = Guard.from_config({**RESULTS_CONFIG, "store": store}), Outputs(), []
    for agent, tool, arg, output in steps:
        decision = await guard.acheck(tool, call_args(arg), agent)
        seen.append(summary(decision))
        if decision.allowed:
            result, ok = outputs.result(tool, call_args(arg), output)
            await guard.arecord_result(tool, call_args(arg), result, agent, ok=ok)
    await guard.aclose()
    assert guard.stats()["fail_open"] == {}  # a fail-open would read as a decision that differs
    return seen


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=STEPS)
def test_an_asyncio_host_gets_the_decisions_of_memory(redis_server: RedisServer, steps: list[Step]) -> None:
    assert asyncio.run(on_redis(redis_server.url, steps)) == in_process(steps)
