"""OpenAI Agents SDK: a run interrupted for a human's approval and resumed is the same run,
with the counts it had (the SDK resumes it from a copy of its state)."""

from __future__ import annotations

from typing import Any

from agents import Agent, RunConfig, Runner, function_tool
from agents.exceptions import ToolInputGuardrailTripwireTriggered

from loopfuse import Guard
from loopfuse.adapters.openai_agents import guard_agent

from .scripted_openai_agents import ScriptedModel, forever
from .test_openai_agents import LIMITS

CONFIG = RunConfig(tracing_disabled=True)


async def approving_each(agent: Agent[Any], approvals: int) -> int:
    """Run ``agent``, approving each call it asks approval for (the SDK's documented flow), at
    most ``approvals`` times; how many times it was resumed."""
    result = await Runner.run(agent, "find it", max_turns=60, run_config=CONFIG)
    resumed = 0
    while result.interruptions and resumed < approvals:
        state = result.to_state()
        for item in result.interruptions:
            state.approve(item)
        result = await Runner.run(agent, state, max_turns=60, run_config=CONFIG)
        resumed += 1
    return resumed


async def test_a_loop_through_approvals_is_stopped_as_without_them() -> None:
    runs: list[str] = []

    @function_tool(needs_approval=True)
    def search(q: str) -> str:
        """Search the web."""
        runs.append(q)
        return "3 results"

    guard = Guard.from_config(LIMITS)
    agent = guard_agent(
        Agent(name="main", model=ScriptedModel(forever("search", {"q": "x"})), tools=[search]), guard
    )

    try:
        resumed = await approving_each(agent, approvals=15)
    except ToolInputGuardrailTripwireTriggered:
        resumed = -1

    assert len(runs) == 3  # as a tool without approval: the 4th identical search is refused
    assert resumed == -1  # and the run was stopped, not run out of approvals
