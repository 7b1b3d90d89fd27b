"""Google ADK: a warning reaches the model inside the function response; the calls of one model
response (one event) are one round."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any

import pytest

pytest.importorskip("google.adk")

from google.adk.agents import LlmAgent
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.plugins.base_plugin import BasePlugin

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


class Counting(BasePlugin):
    """A plugin listed after loopfuse's, counting the tool results it is shown."""

    def __init__(self) -> None:
        super().__init__(name="counting")
        self.seen = 0

    async def after_tool_callback(self, **_: Any) -> None:
        self.seen += 1


class Recording(ScriptedLlm):
    """``ScriptedLlm`` keeping the function responses each request carries."""

    requests: list[list[dict[str, Any]]] = []  # noqa: RUF012  # pydantic copies the default

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        parts = [p for c in llm_request.contents for p in c.parts or []]
        self.requests.append([dict(p.function_response.response or {}) for p in parts if p.function_response])
        async for response in super().generate_content_async(llm_request, stream):
            yield response


async def test_a_warned_call_still_reaches_the_agents_callback_and_later_plugins() -> None:
    """The plugin returned the warned response from its after-tool callback, which made ADK skip
    the agent's own ``after_tool_callback`` and every later plugin's for that call."""
    probe, later, agent_saw = Probe(), Counting(), []
    model = Recording(plan=[call(q="x"), call(q="x"), call(q="x"), say("done")])
    guard = Guard.from_config({"circuit_breaker": {"warn_at": 2}})

    def agent_after(tool: Any, args: Any, tool_context: Any, tool_response: Any) -> None:
        agent_saw.append(tool_response)

    agent = LlmAgent(name="main", model=model, tools=[probe.tool("main")], after_tool_callback=agent_after)
    seen = responses(await run(agent, [LoopfusePlugin(guard), later]))

    assert (later.seen, len(agent_saw)) == (3, 3)
    assert seen[2]["loopfuse_warning"].startswith(NOTICE)
    assert model.requests[3][-1]["loopfuse_warning"].startswith(NOTICE)  # what the model reads
    assert "loopfuse_warning" not in agent_saw[2]  # the tool's own response, untouched
