"""OpenAI Agents SDK, tools beyond function tools: a ``SandboxAgent``'s capability tools (the
shell, the filesystem), which the SDK builds afresh for each run, are guarded like its function
tools; a tool the guard cannot reach is named in a warning."""

from __future__ import annotations

import logging
from typing import Literal

import pytest
from agents import Agent, CustomTool, RunConfig, Runner, Tool, function_tool
from agents.exceptions import ToolInputGuardrailTripwireTriggered
from agents.sandbox import ExecResult, SandboxAgent, SandboxRunConfig
from agents.sandbox.capabilities import Capability, Shell
from agents.testing.sandbox import scripted_sandbox_session

from loopfuse import Guard, LoopAbortedError
from loopfuse.adapters.openai_agents import guard_agent

from .scripted_openai_agents import ScriptedModel, forever
from .test_openai_agents import LIMITS

FAILED_BUILD = ExecResult(stdout=b"build failed\n", stderr=b"", exit_code=1)


async def test_a_shell_command_run_again_and_again_is_stopped() -> None:
    session = scripted_sandbox_session([{"method": "exec", "result": FAILED_BUILD} for _ in range(20)])
    model = ScriptedModel(forever("exec_command", {"cmd": "make test"}))
    agent = guard_agent(
        SandboxAgent(name="coder", model=model, capabilities=[Shell()]), Guard.from_config(LIMITS)
    )
    config = RunConfig(tracing_disabled=True, sandbox=SandboxRunConfig(session=session))

    with pytest.raises(ToolInputGuardrailTripwireTriggered) as caught:
        await Runner.run(agent, "fix the build", max_turns=60, run_config=config)

    error = caught.value.output.output_info
    assert isinstance(error, LoopAbortedError) and "exec_command" in str(error)
    assert model.turns < 20


class Notes(Capability):
    """A capability of the user's own: its tools are built per run, with no hook to reach them."""

    type: Literal["notes"] = "notes"

    def tools(self) -> list[Tool]:
        return [function_tool(lambda text: "noted", name_override="note")]


def test_capability_tools_it_cannot_guard_are_named(caplog: pytest.LogCaptureFixture) -> None:
    agent = SandboxAgent(name="coder", capabilities=[Shell(), Notes()])
    with caplog.at_level(logging.WARNING, logger="loopfuse"):
        guard_agent(agent, Guard())
    warned = [r.getMessage() for r in caplog.records if "not guarded" in r.getMessage()]
    assert len(warned) == 1 and "Notes" in warned[0] and "coder" in warned[0]


def test_a_tool_the_sdk_runs_here_without_guardrails_is_named(caplog: pytest.LogCaptureFixture) -> None:
    sql = CustomTool(name="sql", description="Run SQL.", on_invoke_tool=lambda context, text: "0 rows")
    with caplog.at_level(logging.WARNING, logger="loopfuse"):
        guard_agent(Agent(name="analyst", tools=[sql]), Guard())
    warned = [r.getMessage() for r in caplog.records if "not guarded" in r.getMessage()]
    assert len(warned) == 1 and "'sql'" in warned[0] and "CustomTool" in warned[0]
