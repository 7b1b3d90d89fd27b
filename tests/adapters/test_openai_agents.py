"""OpenAI Agents SDK end to end: Runner.run with a scripted model, the guard as tool guardrails."""

from __future__ import annotations

import asyncio
import gc
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from agents import Agent, FunctionTool, RunConfig, Runner, function_tool
from agents.exceptions import ToolInputGuardrailTripwireTriggered
from agents.mcp import MCPServerStdio, MCPServerStdioParams

from loopfuse import Guard, LoopAbortedError
from loopfuse.adapters.openai_agents import guard_agent
from tests.store_fixtures import processes_output

from .scripted_openai_agents import ScriptedModel, calls, forever, scripted, text

SECRET = "secret-query-7"
LIMITS = {"circuit_breaker": {"duplicate_limit": 3, "result_limit": 3}, "guard": {"abort_after_denials": 4}}
DENIAL = "loopfuse refused this search call"


class Counter:
    def __init__(self) -> None:
        self.runs = 0

    def tool(self, name: str = "search") -> FunctionTool:
        def search(q: str) -> str:
            """Search the web."""
            self.runs += 1
            return "3 results"  # a looping search gets the same answer each time

        return function_tool(search, name_override=name)


def agent_with(model: ScriptedModel, *tools: Any, **kwargs: Any) -> Agent[Any]:
    return Agent(name="main", model=model, tools=list(tools), **kwargs)


async def run(agent: Agent[Any], max_turns: int = 60) -> Any:
    return await Runner.run(
        agent, "find it", max_turns=max_turns, run_config=RunConfig(tracing_disabled=True)
    )


async def test_endless_loop_runs_the_tool_three_times_then_raises() -> None:
    counter, model = Counter(), ScriptedModel(forever("search", {"q": SECRET}))
    agent = guard_agent(agent_with(model, counter.tool()), Guard.from_config(LIMITS))
    with pytest.raises(ToolInputGuardrailTripwireTriggered) as caught:
        await run(agent)
    assert counter.runs == 3
    assert model.turns == 7
    assert [DENIAL in o for o in model.outputs] == [False] * 3 + [True] * 3
    error = caught.value.output.output_info
    assert isinstance(error, LoopAbortedError)
    assert "search" in str(error) and "4 denials" in str(error) and "agent main" in str(error)
    assert all(SECRET not in o for o in model.outputs[3:]) and SECRET not in str(error)


async def test_healthy_run_with_legitimate_repeats_is_untouched() -> None:
    counter = Counter()
    turns = [
        lambda: calls(("search", {"q": "a"})),
        lambda: calls(("search", {"q": "b"}), ("search", {"q": "a"})),
    ]
    turns += [lambda: calls(("search", {"q": "a"}))] * 2
    model = ScriptedModel(scripted(turns))
    guard = Guard()
    result = await run(guard_agent(agent_with(model, counter.tool()), guard))
    assert result.final_output == "done"
    assert counter.runs == 5
    assert not any(DENIAL in o for o in model.outputs)


async def test_runs_do_not_share_state() -> None:
    counter, guard = Counter(), Guard.from_config(LIMITS)
    agent = guard_agent(agent_with(ScriptedModel(forever("search", {"q": SECRET})), counter.tool()), guard)
    for _ in range(2):
        with pytest.raises(ToolInputGuardrailTripwireTriggered):
            await run(agent)
    assert counter.runs == 6
    gc.collect()
    assert guard.stats()["agents"] <= 1  # the first run's state went with its run


async def test_parallel_calls_in_one_turn_count_exactly() -> None:
    counter = Counter()
    model = ScriptedModel(scripted([lambda: calls(*[("search", {"q": SECRET})] * 5)]))
    result = await run(guard_agent(agent_with(model, counter.tool()), Guard.from_config(LIMITS)))
    assert result.final_output == "done"
    assert counter.runs == 5  # identical calls of one model response (one round) count once
    assert sum(DENIAL in o for o in model.outputs) == 0


async def test_agent_used_as_tool_is_guarded_with_its_own_state() -> None:
    counter, inner_model = Counter(), ScriptedModel(forever("search", {"q": SECRET}))
    inner = Agent(name="researcher", model=inner_model, tools=[counter.tool()])
    outer_turns = [lambda: calls(("search", {"q": SECRET}))] * 2 + [
        lambda: calls(("research", {"input": "x"}))
    ]
    outer_model = ScriptedModel(scripted(outer_turns))
    outer = agent_with(outer_model, counter.tool(), inner.as_tool("research", "Research"))
    guard_agent(outer, Guard.from_config(LIMITS))
    result = await run(outer)
    assert counter.runs == 2 + 3
    assert inner_model.turns == 7  # the sub-agent's run was stopped by escalation
    assert "error" in outer_model.outputs[-1].lower()  # the SDK reports the sub-agent tool failed
    assert result.final_output == "done"


def delegating(invocations: int, **options: Any) -> tuple[Counter, ScriptedModel, Agent[Any], Guard]:
    """An agent asking a researcher (an agent used as a tool) ``invocations`` new questions;
    each time the researcher runs the same search once, then answers."""
    counter = Counter()
    inner_model = ScriptedModel(lambda n: calls(("search", {"q": SECRET})) if n % 2 == 0 else text("found"))
    inner = Agent(name="researcher", model=inner_model, tools=[counter.tool()])
    outer_model = ScriptedModel(
        lambda n: calls(("research", {"input": f"question {n}"})) if n < invocations else text("done")
    )
    outer = agent_with(outer_model, inner.as_tool("research", "Research"))
    guard = Guard.from_config(LIMITS)
    guard_agent(outer, guard, **options)
    return counter, inner_model, outer, guard


async def test_each_invocation_of_an_agent_used_as_tool_has_its_own_state() -> None:
    counter, inner_model, outer, guard = delegating(6)
    result = await run(outer)
    assert result.final_output == "done"
    assert counter.runs == 6  # a new question is a new run of the researcher: nothing repeats in it
    assert not any(DENIAL in o for o in inner_model.outputs)
    del result
    gc.collect()
    assert guard.stats()["agents"] <= 1  # each invocation's state went when it returned


async def test_agents_used_as_tools_can_share_state_across_invocations() -> None:
    counter, inner_model, outer, _ = delegating(6, share_subagents=True)
    result = await run(outer)
    assert result.final_output == "done"
    assert counter.runs == 3  # one state for the researcher in the run: its 4th search is refused
    assert [DENIAL in o for o in inner_model.outputs] == [False] * 3 + [True] * 3


async def test_handoff_target_is_guarded_with_its_own_state() -> None:
    counter = Counter()
    support = Agent(
        name="support", model=ScriptedModel(forever("search", {"q": SECRET})), tools=[counter.tool()]
    )
    triage_turns = [lambda: calls(("search", {"q": SECRET}))] * 2 + [
        lambda: calls(("transfer_to_support", {}))
    ]
    triage = Agent(
        name="triage", model=ScriptedModel(scripted(triage_turns)), tools=[counter.tool()], handoffs=[support]
    )
    guard_agent(triage, Guard.from_config(LIMITS))
    with pytest.raises(ToolInputGuardrailTripwireTriggered) as caught:
        await run(triage)
    assert counter.runs == 2 + 3
    assert "agent support" in str(caught.value.output.output_info)


def test_guarding_twice_attaches_one_guardrail() -> None:
    tool, guard = Counter().tool(), Guard()
    agent = agent_with(ScriptedModel(forever("search", {})), tool)
    guard_agent(agent, guard)
    guard_agent(agent, guard)
    assert len(tool.tool_input_guardrails or []) == 1


async def run_with_counter_server(tmp_path: Path, model: ScriptedModel, guard: Guard) -> int:
    """Run ``model``'s agent, guarded, with tools of a stdio MCP server (``mcp_counter_server.py``)
    until the guard stops it; how many times the server's tools ran."""
    counter_file = tmp_path / "runs"
    params: MCPServerStdioParams = {
        "command": sys.executable,
        "args": [str(Path(__file__).with_name("mcp_counter_server.py"))],
        "env": {**os.environ, "COUNTER_FILE": str(counter_file)},
    }
    async with MCPServerStdio(params, client_session_timeout_seconds=30) as server:
        agent = guard_agent(Agent(name="main", model=model, mcp_servers=[server]), guard)
        with pytest.raises(ToolInputGuardrailTripwireTriggered):
            await asyncio.wait_for(run(agent), timeout=60)
    return counter_file.read_text().count("run")


@pytest.mark.slow
async def test_an_mcp_tool_answering_the_same_error_as_text_is_stopped(tmp_path: Path) -> None:
    model = ScriptedModel(lambda n: calls(("lookup", {"key": f"key {chr(97 + n)}"})))
    assert await run_with_counter_server(tmp_path, model, Guard()) == 10  # then same_error refuses
    assert ["loopfuse refused this lookup call" in o for o in model.outputs] == [False] * 10 + [True] * 2


@pytest.mark.slow
async def test_mcp_server_tools_are_guarded(tmp_path: Path) -> None:
    model = ScriptedModel(forever("search", {"q": SECRET}))
    assert await run_with_counter_server(tmp_path, model, Guard.from_config(LIMITS)) == 3
    assert [DENIAL in o for o in model.outputs] == [False] * 3 + [True] * 3


_ONE_PROCESS = """
import asyncio, sys
from agents import RunConfig, Runner
from loopfuse import Guard
from loopfuse.adapters.openai_agents import guard_agent
from tests.adapters.scripted_openai_agents import ScriptedModel, calls, forever, scripted
from tests.adapters.test_openai_agents import LIMITS, Counter, agent_with

looping = sys.argv[2] == "loop"
counter = Counter()
script = forever("search", {"q": "a"}) if looping else scripted([lambda: calls(("search", {"q": "a"}))])
agent = guard_agent(agent_with(ScriptedModel(script), counter.tool()), Guard.from_config(LIMITS, store=sys.argv[1]))
try:
    asyncio.run(Runner.run(agent, "find it", max_turns=20, run_config=RunConfig(tracing_disabled=True)))
except Exception as exc:
    print(type(exc).__name__)
print("searches", counter.runs)
"""


def test_runs_of_two_processes_on_one_redis_do_not_share_state(redis_url: str) -> None:
    """Each process's first run of agent "main" was one Redis agent: a looping run's denials
    stopped the next process's healthy run before its first search ran."""
    outputs = processes_output(_ONE_PROCESS, (redis_url, "loop"), (redis_url, "once"))
    assert outputs == ["ToolInputGuardrailTripwireTriggered\nsearches 3\n", "searches 1\n"]


async def test_runs_of_two_guards_on_one_redis_do_not_share_state(redis_url: str) -> None:
    looping, healthy = Counter(), Counter()
    agent = agent_with(ScriptedModel(forever("search", {"q": "a"})), looping.tool())
    with pytest.raises(ToolInputGuardrailTripwireTriggered):
        await run(guard_agent(agent, Guard.from_config(LIMITS, store=redis_url)))
    model = ScriptedModel(scripted([lambda: calls(("search", {"q": "a"}))]))
    await run(guard_agent(agent_with(model, healthy.tool()), Guard.from_config(LIMITS, store=redis_url)))
    assert (looping.runs, healthy.runs) == (3, 1)
