"""Pydantic AI: a warning reaches the model inside the tool's return; the calls of one model
response (one run step) are one round."""

from __future__ import annotations

from loopfuse import Guard

from .test_pydantic_ai import Counter, ScriptedModel, make_agent, playing

NOTICE = "[loopfuse warning: this search call ran"


async def test_the_third_identical_call_runs_and_its_return_carries_the_warning() -> None:
    counter = Counter()
    model = ScriptedModel(playing([[("search", {"q": "x"})]] * 3))
    guard = Guard.from_config({"circuit_breaker": {"warn_at": 2}})
    result = await make_agent(model, guard, counter).run("find it")
    assert result.output == "done" and counter.runs == 3
    contents = [r.content for r in model.results]
    assert contents[:2] == ["3 results"] * 2
    assert isinstance(contents[2], str) and contents[2].startswith("3 results\n\n" + NOTICE)
    assert [r.outcome for r in model.results] == ["success"] * 3


async def runs_until_refused(per_turn: int) -> tuple[int, list[str]]:
    counter = Counter()
    model = ScriptedModel(lambda n: [("search", {"q": "x"})] * per_turn if n < 5 else None)
    guard = Guard.from_config({"circuit_breaker": {"duplicate_limit": 3}})
    await make_agent(model, guard, counter).run("find it")
    return counter.runs, [r.outcome for r in model.results]


async def test_identical_parallel_calls_of_one_response_count_once() -> None:
    alone, _ = await runs_until_refused(1)
    runs, outcomes = await runs_until_refused(2)
    assert alone == 4  # one call a response: refused after 4 runs
    assert runs == 2 * alone  # two identical calls a response: as many responses, each call ran
    assert outcomes[: 2 * alone + 2] == ["success"] * 2 * alone + ["failed"] * 2
