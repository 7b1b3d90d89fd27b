"""``loopfuse scan`` reads what the OpenAI Agents SDK exports of a run: ``result.to_input_list()``,
the Responses API's items (``function_call``, ``function_call_output``)."""

from __future__ import annotations

import json
from pathlib import Path

from agents import Agent, RunConfig, Runner, function_tool

from tests.analysis.conftest import run_cli

from .scripted_openai_agents import ScriptedModel, calls, scripted, text


@function_tool
def search(q: str) -> str:
    """Search the web."""
    return "3 results"  # the same answer to the same question


async def exported(tmp_path: Path, queries: list[str]) -> Path:
    turns = [lambda q=q: calls(("search", {"q": q})) for q in queries] + [lambda: text("done")]
    result = await Runner.run(
        Agent(name="main", model=ScriptedModel(scripted(turns)), tools=[search]),
        "find it",
        max_turns=60,
        run_config=RunConfig(tracing_disabled=True),
    )
    path = tmp_path / "run.json"
    path.write_text(json.dumps(result.to_input_list()))
    return path


async def test_a_loop_in_an_exported_run_is_found(tmp_path: Path) -> None:
    done = run_cli("scan", "--json", "--fail-on-loop", str(await exported(tmp_path, ["acme"] * 12)))

    assert done.returncode == 1, done.stderr
    (run,) = json.loads(done.stdout)["runs"]
    assert run["calls"] == 12 and run["verdict"] == "loop"


async def test_a_healthy_exported_run_is_read_whole(tmp_path: Path) -> None:
    done = run_cli("scan", "--json", "--fail-on-loop", str(await exported(tmp_path, ["a", "b", "c"])))

    assert done.returncode == 0, done.stderr
    (run,) = json.loads(done.stdout)["runs"]
    assert run["calls"] == 3 and run["verdict"] == "ok"
