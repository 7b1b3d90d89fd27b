"""smolagents: the tools as users write them. A ``@tool`` function's call is judged by its
argument names, as a ``Tool`` subclass's is; a tool that loads what it needs in ``setup()`` runs
once guarded."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("smolagents")

from smolagents import CodeAgent, Tool, ToolCallingAgent, tool  # type: ignore[import-untyped]

from loopfuse import Guard, LoopAbortedError
from loopfuse.adapters.smolagents import guard_agent

from .test_smolagents import ScriptedModel, observations

FINAL = [("final_answer", {"answer": "done"})]
SEARCHES: list[str] = []


@tool  # type: ignore[untyped-decorator]  # smolagents is untyped
def search(query: str, reason: str = "") -> str:
    """Search the web.

    Args:
        query: what to search for.
        reason: why.
    """
    SEARCHES.append(query)
    return "no results"


def test_a_tool_functions_calls_are_judged_by_their_argument_names() -> None:
    """``[tools.search] identity_args = ["query"]``: new queries are new calls, whatever the reason."""
    plan = [[("search", {"query": f"query {n}", "reason": "r"})] for n in range(8)] + [FINAL]
    guard = Guard.from_config({"tools": {"search": {"identity_args": ["query"]}}})
    agent = guard_agent(ToolCallingAgent(tools=[search], model=ScriptedModel(plan), max_steps=20), guard)

    assert agent.run("go") == "done"
    assert guard.stats()["denied"] == 0


def test_a_tool_function_called_by_position_or_by_name_is_one_call() -> None:
    """The same search 8 times in a CodeAgent's code, by name, or by position every other time."""
    denials = []
    for by_position in (False, True):
        calls = [f"print(search({'' if by_position and n % 2 else 'query='}'acme'))" for n in range(8)]
        code = "<code>\n" + "\n".join(calls) + "\n</code>"
        guard = Guard()
        agent = guard_agent(CodeAgent(tools=[search], model=ScriptedModel([code]), max_steps=3), guard)
        with pytest.raises(LoopAbortedError):
            agent.run("go")
        denials.append(guard.stats()["denials"])

    assert denials[1] == denials[0]


class Lookup(Tool):  # type: ignore[misc]  # Tool is Any: smolagents is untyped
    name = "lookup"
    description = "Look up a word."
    inputs = {"word": {"type": "string", "description": "the word"}}  # noqa: RUF012
    output_type = "string"

    def setup(self) -> None:
        self.table = {"acme": "a company"}  # loaded once, on the first call, as smolagents advises
        super().setup()

    def forward(self, word: str) -> str:
        return self.table.get(word, "unknown")


def test_a_tool_set_up_on_its_first_call_runs_guarded() -> None:
    model = ScriptedModel([[("lookup", {"word": "acme"})], FINAL])
    agent = guard_agent(ToolCallingAgent(tools=[Lookup()], model=model, max_steps=5), Guard())

    assert agent.run("go") == "done"
    assert "a company" in observations(agent)[0]


def test_a_loop_of_a_tool_function_is_stopped() -> None:
    SEARCHES.clear()
    plan: list[Any] = [[("search", {"query": "acme", "reason": f"attempt {n}"})] for n in range(15)]
    agent = guard_agent(ToolCallingAgent(tools=[search], model=ScriptedModel(plan), max_steps=20), Guard())

    with pytest.raises(LoopAbortedError, match="duplicate"):
        agent.run("go")
    assert len(SEARCHES) == 5  # the reason is ignored (a default ignore_args): five identical searches


class Snapshot(Tool):  # type: ignore[misc]  # Tool is Any: smolagents is untyped
    name = "snapshot"
    description = "Take a snapshot of the page."
    inputs = {"page": {"type": "string", "description": "the page"}}  # noqa: RUF012
    output_type = "image"

    def forward(self, page: str) -> Any:
        from PIL import Image

        return Image.new("RGB", (2, 2))


def test_a_denied_image_tools_call_answers_the_model_with_the_denial_text() -> None:
    """smolagents makes whatever an image tool returns an image: the model read "Stored
    'image.png' in memory" where the denial should be."""
    model = ScriptedModel([[("snapshot", {"page": "home"})]] * 4 + [FINAL])
    guard = Guard.from_config({"duplicate": {"limit": 2}})
    agent = guard_agent(ToolCallingAgent(tools=[Snapshot()], model=model, max_steps=8), guard)

    agent.run("go")

    seen = observations(agent)
    assert seen[:2] == ["Stored 'image.png' in memory."] * 2
    assert all(o.startswith("loopfuse refused this snapshot call") for o in seen[2:4])
    assert type(agent.state["image.png"]).__name__ == "AgentImage"


def test_a_denied_image_tool_in_a_code_agent_returns_the_denial_text() -> None:
    code = "<code>\n" + "\n".join("print(str(snapshot(page='home'))[:36])" for _ in range(3)) + "\n</code>"
    final = "<code>\nfinal_answer('done')\n</code>"
    guard = Guard.from_config({"duplicate": {"limit": 2}})
    agent = guard_agent(CodeAgent(tools=[Snapshot()], model=ScriptedModel([code, final]), max_steps=3), guard)

    agent.run("go")

    assert "loopfuse refused this snapshot call" in observations(agent)[0]
