"""Google ADK: what a tool returns or raises reaches the guard as the result-aware breakers
need it, and an invocation's state goes when it ends."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

pytest.importorskip("google.adk")

from google.adk.agents import LlmAgent
from google.adk.plugins.reflect_retry_tool_plugin import ReflectAndRetryToolPlugin
from pydantic import BaseModel

from loopfuse import Guard
from loopfuse.adapters.google_adk import LoopfusePlugin

from .test_google_adk import Plan, ScriptedLlm, call, responses, run, say

USERS = ["alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi", "ivan", "judy", "ken", "lena"]


class Rows(BaseModel):
    rows: list[int]


@dataclass
class DataRows:
    rows: list[int]


def first_denial(events: list[Any]) -> str:
    return next(str(r["error"]) for r in responses(events) if "loopfuse" in str(r.get("error", "")))


@pytest.mark.parametrize("answer", [Rows(rows=[1, 2]), DataRows(rows=[1, 2])], ids=["pydantic", "dataclass"])
async def test_a_result_that_is_an_object_is_judged(answer: Any) -> None:
    def lookup(q: str) -> Any:
        """Look something up."""
        return answer

    guard = Guard()
    agent = LlmAgent(name="main", model=ScriptedLlm(plan=[call("lookup", q="x")]), tools=[lookup])
    events = await run(agent, [LoopfusePlugin(guard)])
    assert "returned the same result 5 times" in first_denial(events)
    assert guard.stats()["fail_open"] == {}


async def test_an_error_response_counts_as_a_failure() -> None:
    def deploy(env: str) -> dict[str, Any]:
        """Deploy."""
        return {"status": "error", "error_message": "permission denied"}

    agent = LlmAgent(name="main", model=ScriptedLlm(plan=[call("deploy", env="prod")]), tools=[deploy])
    events = await run(agent, [LoopfusePlugin(Guard())])
    assert "failed with the same error" in first_denial(events)


async def test_different_failures_are_not_the_same_error() -> None:
    def fetch(user: str) -> dict[str, Any]:
        """Fetch a user."""
        raise RuntimeError(f"no such user: {user}")

    async def answer_errors(tool: Any, args: Any, tool_context: Any, error: Exception) -> dict[str, Any]:
        return {"error": str(error)}

    plan: Plan = [*(call("fetch", user=u) for u in USERS), say("done")]
    agent = LlmAgent(
        name="main", model=ScriptedLlm(plan=plan), tools=[fetch], on_tool_error_callback=answer_errors
    )
    events = await run(agent, [LoopfusePlugin(Guard())])
    assert not any("loopfuse" in str(r) for r in responses(events))


async def test_an_invocations_state_goes_when_it_ends() -> None:
    def lookup(q: str) -> str:
        """Look something up."""
        return q

    guard = Guard()
    for _ in range(3):
        plan: Plan = [call("lookup", q="a"), say("done")]
        await run(
            LlmAgent(name="main", model=ScriptedLlm(plan=plan), tools=[lookup]), [LoopfusePlugin(guard)]
        )
    assert guard.stats()["agents"] == 0


async def test_an_invocation_that_ends_in_an_error_loses_its_state_too() -> None:
    def lookup(q: str) -> str:
        """Look something up."""
        raise ConnectionError("upstream down")  # no error callback answers it: ADK re-raises

    guard = Guard()
    for _ in range(3):
        agent = LlmAgent(name="main", model=ScriptedLlm(plan=[call("lookup", q="a")]), tools=[lookup])
        with pytest.raises(ConnectionError):
            await run(agent, [LoopfusePlugin(guard)])
    assert guard.stats()["agents"] == 0


@pytest.mark.parametrize("reflect_first", [True, False])
async def test_a_failure_another_plugin_answered_is_still_a_failure(reflect_first: bool) -> None:
    """ADK's ``ReflectAndRetryToolPlugin`` answers a tool's error with its own reflection (then
    loopfuse, registered after it, sees that answer as the tool's response)."""

    def fetch(user: str) -> dict[str, Any]:
        """Fetch a user."""
        raise TimeoutError("upstream timed out")

    reflect = ReflectAndRetryToolPlugin(max_retries=3, throw_exception_if_retry_exceeded=False)
    loopfuse = LoopfusePlugin(Guard())
    agent = LlmAgent(name="main", model=ScriptedLlm(plan=[call("fetch", user="alice")]), tools=[fetch])

    events = await run(agent, [reflect, loopfuse] if reflect_first else [loopfuse, reflect])

    assert "failed with the same error" in first_denial(events)


class _RaisingEquality:
    """A value whose comparison raises, as a numpy array's truth value does."""

    def __eq__(self, other: object) -> bool:
        raise RuntimeError("ambiguous")

    __hash__ = object.__hash__


@pytest.mark.parametrize("key", ["status", "response_type"])
async def test_a_response_whose_values_cannot_be_compared_runs_as_without_the_guard(key: str) -> None:
    """ADK's error shapes were read with ==: the tool's value raised inside the after-tool callback
    and the run crashed."""

    def search(q: str) -> dict[str, Any]:
        """Search."""
        return {"result": "x", key: _RaisingEquality()}

    guard = Guard()
    agent = LlmAgent(name="main", model=ScriptedLlm(plan=[call("search", q="x")]), tools=[search])
    events = await run(agent, [LoopfusePlugin(guard)])
    assert first_denial(events).startswith("loopfuse refused this search call")  # the run went on
