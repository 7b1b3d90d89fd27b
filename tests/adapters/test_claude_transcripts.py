"""``loopfuse scan`` and ``replay`` read the session transcripts the bundled Claude Code CLI writes:
each tool call once, though the CLI also logs every request's whole conversation
(``api-request-blob`` records)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("claude_agent_sdk")

from loopfuse.analysis.transcripts.base import ReadTally
from loopfuse.analysis.transcripts.claude_code import read_claude_code

from .claude_harness import call, run_claude, say
from .fake_anthropic import tool_results
from .test_claude_agent_sdk import main_then_subagent

PLAN = [call(q="status"), call(q="deploy"), call(q="status"), call(q="status"), say("deployed")]


def healthy(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return PLAN[len(tool_results(messages))]


def calls_read(home: str) -> dict[str, list[str]]:
    """Each agent's calls as the transcripts under ``home`` record them: ``{agent: [q, ...]}``."""
    read: dict[str, list[str]] = {}
    for path in sorted(Path(home, "projects").rglob("*.jsonl")):
        for call_ in read_claude_code(path, ReadTally()):
            read.setdefault(call_.agent, []).append(str((call_.args or {}).get("q", call_.tool)))
    return read


async def test_each_call_of_a_session_is_read_once() -> None:
    run = await run_claude(healthy, None)

    assert calls_read(run.home) == {"main": ["status", "deploy", "status", "status"]}


@pytest.mark.slow
async def test_a_subagents_calls_are_its_own_and_read_once() -> None:
    run = await run_claude(main_then_subagent, None, with_subagent=True)

    read = calls_read(run.home)
    assert read.pop("main") == ["same", "same", "Agent"]
    assert list(read.values()) == [["same", "same"]]  # one sub-agent, no phantom main of its file
