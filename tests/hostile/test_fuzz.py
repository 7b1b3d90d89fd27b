"""Hypothesis over hostile tool names, arguments, results and agents, on both stores: no
exception escapes any entry point (only the documented ``LoopAbortedError`` from a wrapped
function), no case takes more than a few seconds, and the guard still judges afterwards."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loopfuse import Decision, Guard, LoopAbortedError
from tests.store_fixtures import RedisServer

from .conftest import SMALL, guard_on
from .hostile_objects import ERRORS, values

CASE_SECONDS = 10.0  # a hang, not a slow case on a loaded machine
HOSTILE = [value for error in ERRORS for value in values(error)]
GOOD_TOOLS, GOOD_ARGS, GOOD_AGENTS = ["read", "bash"], [{"p": 1}, {}, None], ["a", "b"]
TOOLS = GOOD_TOOLS + HOSTILE
ARGS = GOOD_ARGS + HOSTILE
AGENTS = GOOD_AGENTS + HOSTILE
RESULTS = ["ok", {"n": 1}, ValueError("boom"), *HOSTILE]
OKS = [None, True, False, *HOSTILE[:12]]
ENTRIES = ("check", "acheck", "record_result", "wrap")


# Indices into the pools: Hypothesis itself must never touch a hostile object.
OPS = st.lists(
    st.tuples(
        st.sampled_from(ENTRIES),
        st.integers(0, len(TOOLS) - 1),
        st.integers(0, len(ARGS) - 1),
        st.integers(0, len(AGENTS) - 1),
        st.integers(0, len(RESULTS) - 1),
        st.integers(0, len(OKS) - 1),
    ),
    min_size=1,
    max_size=8,
)

CASES: Counter[tuple[str, str]] = Counter()
SLOWEST: dict[str, float] = {}


class Hung(BaseException):
    """Raised by the alarm: a BaseException, so no ``except Exception`` can swallow it."""


@contextmanager
def bounded(seconds: float) -> Iterator[None]:
    def alarm(*_: Any) -> None:
        raise Hung(f"a case ran longer than {seconds} s")

    previous = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def run_op(guard: Guard, loop: asyncio.AbstractEventLoop, op: tuple[Any, ...]) -> None:
    entry, tool, args, agent, result, ok = op
    tool, args, agent, result, ok = TOOLS[tool], ARGS[args], AGENTS[agent], RESULTS[result], OKS[ok]
    if entry == "check":
        assert isinstance(guard.check(tool, args, agent), Decision)
    elif entry == "acheck":
        assert isinstance(loop.run_until_complete(guard.acheck(tool, args, agent)), Decision)
    elif entry == "record_result":
        assert guard.record_result(tool, args, result, agent, ok=ok) is None
    else:
        wrapped = guard.wrap(lambda **kwargs: "ran", tool=tool, agent=agent)
        with contextlib.suppress(LoopAbortedError):  # documented: the agent escalated
            wrapped(x=args)


@pytest.fixture
def fuzz_guard(
    store_kind: tuple[str, RedisServer | None], tmp_path: Path
) -> Iterator[tuple[str, Guard, asyncio.AbstractEventLoop]]:
    kind, server = store_kind
    mapping = {
        **SMALL,
        "circuit_breaker": {**SMALL["circuit_breaker"], "incident_log": str(tmp_path / "i.jsonl")},
    }
    guard = guard_on(kind, server, mapping)
    loop = asyncio.new_event_loop()
    yield kind, guard, loop
    loop.run_until_complete(guard.aclose())
    loop.close()
    _write_table()


def _write_table() -> None:
    target = os.environ.get("LOOPFUSE_HOSTILE_TABLE")
    if target:
        table = {f"{entry}/{kind}": n for (entry, kind), n in sorted(CASES.items())}
        Path(target).write_text(json.dumps({"cases": table, "slowest_s": SLOWEST}, indent=1))


@settings(
    max_examples=int(os.environ.get("LOOPFUSE_HOSTILE_EXAMPLES", "500")),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(ops=OPS)
def test_no_hostile_object_escapes_or_hangs(
    fuzz_guard: tuple[str, Guard, asyncio.AbstractEventLoop], ops: list[tuple[Any, ...]]
) -> None:
    kind, guard, loop = fuzz_guard
    for op in ops:
        start = time.perf_counter()
        with bounded(CASE_SECONDS):
            run_op(guard, loop, op)
        elapsed = time.perf_counter() - start
        CASES[(op[0], kind)] += 1
        SLOWEST[kind] = max(SLOWEST.get(kind, 0.0), elapsed)
    assert isinstance(guard.stats()["fail_open"], dict)


def test_every_hostile_object_in_every_place(store_kind: tuple[str, RedisServer | None]) -> None:
    """Each hostile object as the tool, the arguments, the agent, the result and ``ok``, at
    each entry point; then the guard still judges a good agent exactly."""
    kind, server = store_kind
    guard = guard_on(kind, server)
    loop = asyncio.new_event_loop()
    offsets = (len(GOOD_TOOLS), len(GOOD_ARGS), len(GOOD_AGENTS), 3)
    for entry in ENTRIES:
        for index in range(len(HOSTILE)):
            for place, offset in enumerate(offsets):
                op = [entry, 0, 0, 0, 0, 0]
                op[1 + place] = index + offset
                with bounded(CASE_SECONDS):
                    run_op(guard, loop, tuple(op))
                CASES[(entry, kind)] += 1
    assert [guard.check("read", {"p": 1}, "probe").allowed for _ in range(3)] == [True, True, False]
    fail_open = guard.stats()["fail_open"]
    assert fail_open["agent_identity"] > 0 and fail_open["unserializable"] > 0
    assert fail_open["tool_name"] > 0 and fail_open["result"] > 0
    loop.run_until_complete(guard.aclose())
    loop.close()
    _write_table()
