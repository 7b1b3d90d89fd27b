"""Fixtures for the compaction tests: a scripted LangChain run and its counters."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

import pytest

pytest.importorskip("langchain.agents")

from langchain.agents.middleware import SummarizationMiddleware

from .scripted import Agent, CountingSummarizer, ScriptedAgentModel, build_agent, file_reader

TRIGGER = ("tokens", 2000)
OVERSIZED_CHARS = 12_000  # ~3,000 tokens: one output alone is over the 2,000-token trigger
REFILLING_CHARS = 6_000  # ~1,500 tokens: under the trigger alone, over it with the next one
MODERATE_CHARS = 1_200  # ~300 tokens: several turns fit between compactions


@dataclass
class Scenario:
    """One scripted run: the agent, its models, and the tool's call log."""

    agent: Agent
    model: ScriptedAgentModel
    summarizer: CountingSummarizer
    ran: list[str]


M = TypeVar("M", bound=SummarizationMiddleware)


class MakeScenario(Protocol):
    """The ``make_scenario`` fixture: a run built around a new ``middleware_cls``, and that middleware."""

    def __call__(
        self, middleware_cls: type[M], output_chars: int, tool_turns: int, **kwargs: Any
    ) -> tuple[Scenario, M]: ...


def scenario(
    middleware_cls: type[M], output_chars: int, tool_turns: int, **kwargs: Any
) -> tuple[Scenario, M]:
    summarizer = CountingSummarizer()
    kwargs.setdefault("trigger", TRIGGER)
    kwargs.setdefault("keep", ("messages", 4))
    system_prompt = kwargs.pop("system_prompt", None)
    middleware = middleware_cls(summarizer, **kwargs)
    model = ScriptedAgentModel(tool_turns=tool_turns)
    reader, ran = file_reader(output_chars)
    agent = build_agent(model, reader, middleware, system_prompt)
    return Scenario(agent, model, summarizer, ran), middleware


@pytest.fixture
def make_scenario() -> MakeScenario:
    return scenario
