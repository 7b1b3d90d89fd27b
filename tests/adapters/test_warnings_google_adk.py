"""Google ADK: a warning reaches the model inside the function response; the calls of one model
response (one event) are one round."""

from __future__ import annotations

import pytest

pytest.importorskip("google.adk")

from google.adk.agents import LlmAgent

from loopfuse import Guard
from loopfuse.adapters.google_adk import LoopfusePlugin, loopfuse_callbacks

from .test_google_adk import Probe, ScriptedLlm, call, responses, run, say

NOTICE = "[loopfuse warning: this probe call ran"


@pytest.mark.parametrize("hook", ["plugin", "agent_callbacks"])
async def test_the_third_identical_call_runs_and_its_response_carries_the_warning(hook: str) -> None:
    probe, guard = Probe(), Guard.from_config({"circuit_breaker": {"warn_at": 2}})
    model = ScriptedLlm(plan=[call(q="x"), call(q="x"), call(q="x"), say("done")])
    if hook == "plugin":
        agent, plugins = (
            LlmAgent(name="main", model=model, tools=[probe.tool("main")]),
            [LoopfusePlugin(guard)],
        )
    else:
        cb = loopfuse_callbacks(guard)
        agent = LlmAgent(
            name="main", model=model, tools=[probe.tool("main")],
            before_tool_callback=cb.before, after_tool_callback=cb.after,
        )  # fmt: skip
        plugins = []
    seen = responses(await run(agent, plugins))
    assert len(probe.runs) == 3
    assert [r["result"] for r in seen] == ["the same answer"] * 3
    assert ["loopfuse_warning" in r for r in seen] == [False, False, True]
    assert seen[2]["loopfuse_warning"].startswith(NOTICE)


async def runs_until_refused(per_turn: int) -> tuple[int, list[bool]]:
    probe = Probe()
    model = ScriptedLlm(plan=[[call(q="x")] * per_turn] * 5 + [say("done")])
    guard = Guard.from_config(
        {"circuit_breaker": {"duplicate_limit": 3}, "guard": {"abort_after_denials": 0}}
    )
    events = await run(
        LlmAgent(name="main", model=model, tools=[probe.tool("main")]), [LoopfusePlugin(guard)]
    )
    return len(probe.runs), ["error" in r for r in responses(events)]


async def test_identical_parallel_calls_of_one_response_count_once() -> None:
    alone, _ = await runs_until_refused(1)
    runs, denied = await runs_until_refused(2)
    assert alone == 4  # one call a response: refused after 4 runs
    assert runs == 2 * alone  # two identical calls a response: as many responses, each call ran
    assert denied[: 2 * alone + 2] == [False] * 2 * alone + [True] * 2
