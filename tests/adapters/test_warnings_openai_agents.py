"""OpenAI Agents SDK: a warning reaches the model inside the function call's output; the calls
of one model response are one round."""

from __future__ import annotations

from loopfuse import Guard
from loopfuse.adapters.openai_agents import guard_agent

from .scripted_openai_agents import ScriptedModel, calls, text
from .test_openai_agents import DENIAL, Counter, agent_with, run

NOTICE = "[loopfuse warning: this search call ran"


async def test_the_third_identical_call_runs_and_its_output_carries_the_warning() -> None:
    counter = Counter()
    model = ScriptedModel(lambda n: calls(("search", {"q": "x"})) if n < 3 else text("done"))
    guard = Guard.from_config({"circuit_breaker": {"warn_at": 2}})
    result = await run(guard_agent(agent_with(model, counter.tool()), guard))
    assert result.final_output == "done" and counter.runs == 3
    assert model.outputs[:2] == ["3 results"] * 2
    assert model.outputs[2].startswith("3 results\n\n" + NOTICE)


async def runs_until_refused(per_turn: int) -> tuple[int, list[bool]]:
    counter = Counter()
    model = ScriptedModel(lambda n: calls(*[("search", {"q": "x"})] * per_turn) if n < 5 else text("done"))
    guard = Guard.from_config({"circuit_breaker": {"duplicate_limit": 3}})
    await run(guard_agent(agent_with(model, counter.tool()), guard))
    return counter.runs, [DENIAL in output for output in model.outputs]


async def test_identical_parallel_calls_of_one_response_count_once() -> None:
    alone, _ = await runs_until_refused(1)
    runs, denied = await runs_until_refused(2)
    assert alone == 4  # one call a response: refused after 4 runs
    assert runs == 2 * alone  # two identical calls a response: as many responses, each call ran
    assert denied[: 2 * alone + 2] == [False] * 2 * alone + [True] * 2
