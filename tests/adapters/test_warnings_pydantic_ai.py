"""Pydantic AI: a warning reaches the model inside the tool's return; the calls of one model
response (one run step) are one round."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from pydantic import BaseModel
from pydantic_ai import Agent, BinaryContent, ToolReturn
from pydantic_ai.messages import ModelRequest, ToolReturnPart

from loopfuse import Guard
from loopfuse.adapters.pydantic_ai import LoopfuseCapability

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


class Rows(BaseModel):
    rows: list[int]


PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 40
RETURNS: dict[str, Callable[[], Any]] = {
    "ToolReturn": lambda: ToolReturn(
        return_value="saved", content=["see the screenshot"], metadata={"id": 7}
    ),
    "image": lambda: BinaryContent(data=PNG, media_type="image/png"),
    "pydantic model": lambda: Rows(rows=[1, 2]),
}


@pytest.mark.parametrize("kind", RETURNS)
async def test_a_warning_keeps_what_the_tool_returned_as_pydantic_ai_sends_it(kind: str) -> None:
    """The warned return reaches the model as the unwarned one does (metadata and extra content
    kept, an image as an image, a model as its JSON), with the warning beside it."""

    def shot(q: str) -> Any:
        """Take a screenshot."""
        return RETURNS[kind]()

    parts = []
    for config in ({}, {"circuit_breaker": {"warn_at": 2}}):
        model = ScriptedModel(playing([[("shot", {"q": "x"})]] * 3))
        agent = Agent(model.model, capabilities=[LoopfuseCapability(Guard.from_config(config))])
        agent.tool_plain(shot)
        result = await agent.run("go")
        last = [m for m in result.all_messages() if isinstance(m, ModelRequest)][-1]
        parts.append(last.parts)

    (plain, *plain_rest), (warned, *warned_rest) = parts
    assert isinstance(plain, ToolReturnPart) and isinstance(warned, ToolReturnPart)
    assert warned.metadata == plain.metadata and [type(p) for p in warned_rest] == [
        type(p) for p in plain_rest
    ]
    notice = NOTICE.replace("search", "shot")
    assert notice in warned.model_response_str() and notice not in plain.model_response_str()
    assert plain.model_response_str() in warned.model_response_str()
    assert images(warned) == images(plain)


def images(part: ToolReturnPart) -> list[BinaryContent]:
    contents = part.content if isinstance(part.content, list) else [part.content]
    return [c for c in contents if isinstance(c, BinaryContent)]
