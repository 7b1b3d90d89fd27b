"""OpenAI Agents SDK: calls the SDK answers with its failure text are reported as errors (so
``same_error`` stops them), and a tool or agent takes one guard."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from agents import Agent, FunctionTool, RunConfig, Runner, function_tool
from agents.exceptions import ToolInputGuardrailTripwireTriggered
from openai.types.responses import ResponseFunctionToolCall

from loopfuse import Guard
from loopfuse.adapters.openai_agents import guard_agent

from .scripted_openai_agents import ScriptedModel, Turn, forever
from .test_openai_agents import Counter, agent_with

SDK_FAILURE = "An error occurred while"  # the SDK's default failure text (running the tool / parsing)
SAME_ERROR = "failed with the same error"
_ids = itertools.count()


class Flaky:
    """A tool that raises every time, counting its runs."""

    def __init__(self) -> None:
        self.runs = 0

    def tool(self, **kwargs: Any) -> FunctionTool:
        def fetch(q: str) -> str:
            """Fetch a page."""
            self.runs += 1
            raise RuntimeError("backend down")

        return function_tool(fetch, **kwargs)


async def run(agent: Agent[Any]) -> Any:
    return await Runner.run(agent, "find it", max_turns=60, run_config=RunConfig(tracing_disabled=True))


async def stopped_kind(agent: Agent[Any]) -> str:
    with pytest.raises(ToolInputGuardrailTripwireTriggered) as caught:
        await run(agent)
    return str(caught.value.output.output_info.kind)


def bad_json(name: str) -> Turn:
    """A model turn calling ``name`` with arguments that are not JSON."""
    n = next(_ids)
    call = ResponseFunctionToolCall(
        type="function_call", name=name, arguments='{"q": ', call_id=f"j{n}", id=f"fj{n}"
    )
    return [call]


async def test_a_tool_failing_the_same_way_is_stopped_as_same_error() -> None:
    flaky, model = Flaky(), ScriptedModel(forever("fetch", {"q": "acme"}))
    assert await stopped_kind(guard_agent(agent_with(model, flaky.tool()), Guard())) == "same_error"
    assert flaky.runs == 4
    assert [o.startswith(SDK_FAILURE) for o in model.outputs[:5]] == [True] * 4 + [False]
    assert SAME_ERROR in model.outputs[4]


async def test_a_custom_failure_error_function_still_answers_and_the_failure_counts() -> None:
    flaky, model = Flaky(), ScriptedModel(forever("fetch", {"q": "acme"}))
    tool = flaky.tool(failure_error_function=lambda ctx, error: f"custom: {error}")
    assert await stopped_kind(guard_agent(agent_with(model, tool), Guard())) == "same_error"
    assert model.outputs[:4] == ["custom: backend down"] * 4


async def test_failure_error_function_none_still_raises_out_of_the_run() -> None:
    flaky, guard = Flaky(), Guard()
    tool = flaky.tool(failure_error_function=None)
    with pytest.raises(Exception, match="backend down"):
        await run(guard_agent(agent_with(ScriptedModel(forever("fetch", {"q": "a"})), tool), guard))
    assert flaky.runs == 1
    assert guard.stats()["denied"] == 0


async def test_arguments_that_are_not_json_count_as_failures() -> None:
    counter, model = Counter(), ScriptedModel(lambda n: bad_json("search"))
    assert await stopped_kind(guard_agent(agent_with(model, counter.tool()), Guard())) == "same_error"
    assert counter.runs == 0
    assert all(o.startswith(SDK_FAILURE) for o in model.outputs[:4])


def two_agents_sharing(tool: FunctionTool) -> tuple[Agent[Any], Agent[Any], ScriptedModel]:
    model = ScriptedModel(forever("search", {"q": "x"}))
    one = Agent(name="one", model=ScriptedModel(forever("search", {"q": "x"})), tools=[tool])
    return one, Agent(name="two", model=model, tools=[tool]), model


async def test_a_tool_shared_with_an_agent_of_another_guard_raises() -> None:
    counter, first, second = Counter(), Guard(), Guard()
    one, two, _ = two_agents_sharing(counter.tool())
    guard_agent(one, first)
    with pytest.raises(ValueError, match="tool 'search' is already guarded by another Guard"):
        guard_agent(two, second)
    assert two.hooks is None  # nothing was changed
    await stopped_kind(one)
    assert first.stats()["checks"] > 0 and second.stats()["checks"] == 0


async def test_agents_sharing_a_tool_under_one_guard_are_both_guarded() -> None:
    counter, guard = Counter(), Guard()
    one, two, model = two_agents_sharing(counter.tool())
    guard_agent(one, guard)
    guard_agent(two, guard)
    assert await stopped_kind(two) == "duplicate"
    assert counter.runs == 5 and model.turns == 8


def test_an_agent_guarded_by_another_guard_raises() -> None:
    agent = Agent(name="triage", model=ScriptedModel(forever("search", {})))
    guard_agent(agent, Guard())
    with pytest.raises(ValueError, match="agent 'triage' is already guarded by another Guard"):
        guard_agent(agent, Guard())
