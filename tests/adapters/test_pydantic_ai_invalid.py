"""Pydantic AI: unknown tools and rejected arguments as invalid turns; the warning when the
run's request_limit ends a loop before the guard does."""

from __future__ import annotations

import logging

import pytest
from pydantic_ai import Agent
from pydantic_ai.exceptions import UsageLimitExceeded
from pydantic_ai.usage import UsageLimits

from loopfuse import Guard, LoopAbortedError
from loopfuse.adapters.pydantic_ai import LoopfuseCapability

from .test_pydantic_ai import Counter, ScriptedModel, Turn, forever, playing

INVALID = "contained no usable tool call"


def make_agent(model: ScriptedModel, guard: Guard, counter: Counter, retries: int = 20) -> Agent[None, str]:
    agent = Agent(model.model, capabilities=[LoopfuseCapability(guard)], retries=retries)
    agent.tool_plain(counter.search)
    return agent


def texts(model: ScriptedModel) -> list[str]:
    return [str(r.content) for r in model.results]


def missing(n: int) -> Turn:
    return [("serch", {"q": "acme"})]


async def test_a_model_calling_a_missing_tool_again_and_again_is_stopped() -> None:
    counter, model = Counter(), ScriptedModel(missing)
    with pytest.raises(LoopAbortedError, match="invalid") as caught:
        await make_agent(model, Guard(), counter).run("find it")
    seen = texts(model)
    assert [t.startswith("Unknown tool name: 'serch'") for t in seen] == [True] * 5 + [False] * 2
    assert all(INVALID in t for t in seen[5:])  # the 6th to the 11th: the guard's text
    assert "3 denials" in str(caught.value) and model.turns == 8 and counter.runs == 0


async def test_scattered_invalid_turns_among_real_work_change_nothing() -> None:
    bad, good = [("serch", {"q": "acme"})], [("search", {"q": "acme"})]
    turns = [bad, good, bad, bad, [("search", {"q": "b"})], *[bad] * 5, [("search", {"q": "c"})], *[bad] * 5]
    counter, model, guard = Counter(), ScriptedModel(playing(turns)), Guard()
    result = await make_agent(model, guard, counter).run("find it")
    assert result.output == "done" and counter.runs == 3
    assert not any(INVALID in t for t in texts(model)) and guard.stats()["denials"] == {}


async def test_arguments_the_tool_rejects_are_invalid_turns() -> None:
    counter, model = Counter(), ScriptedModel(lambda n: [("search", {"query": "acme"})])
    guard = Guard.from_config({"invalid": {"limit": 2}})
    with pytest.raises(LoopAbortedError):
        await make_agent(model, guard, counter).run("find it")
    outcomes = [(r.outcome, INVALID in str(r.content)) for r in model.results]
    assert outcomes == [("retried", False), ("failed", True), ("failed", True)]
    assert model.turns == 4 and counter.runs == 0 and guard.stats()["allowed"] == 0


def warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if "ends a looping run" in r.getMessage()]


@pytest.mark.parametrize(("request_limit", "warned"), [(7, True), (8, False)])
async def test_request_limit_below_the_escalation_point(
    caplog: pytest.LogCaptureFixture, request_limit: int, warned: bool
) -> None:
    caplog.set_level(logging.WARNING, logger="loopfuse")
    agent = make_agent(ScriptedModel(forever), Guard(), Counter())
    with pytest.raises(UsageLimitExceeded if warned else LoopAbortedError):
        await agent.run("find it", usage_limits=UsageLimits(request_limit=request_limit))
    found = warnings(caplog)
    assert len(found) == warned
    assert not warned or ("request_limit=7" in found[0] and "request_limit >= 8" in found[0])


async def replies_until_stopped(call: tuple[str, dict[str, str]], per_reply: int) -> int:
    model = ScriptedModel(lambda n: [call] * per_reply)
    with pytest.raises(LoopAbortedError):
        await make_agent(model, Guard(), Counter(), retries=50).run("find it")
    return model.turns


@pytest.mark.parametrize(
    "call", [("serch", {"q": "acme"}), ("search", {"query": "acme"})], ids=["unknown", "args"]
)
async def test_a_reply_of_several_bad_calls_is_one_invalid_turn(call: tuple[str, dict[str, str]]) -> None:
    """Replies of 1 or 3 calls of a missing tool (or with arguments the tool rejects) are stopped
    after as many replies: the guard counts replies with no usable call, not calls."""
    assert await replies_until_stopped(call, 3) == await replies_until_stopped(call, 1) == 8
