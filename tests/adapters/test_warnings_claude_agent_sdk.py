"""Claude Agent SDK: a warning reaches the model inside the tool result (the real SDK and CLI,
a fake Anthropic API)."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("claude_agent_sdk")

from loopfuse import Guard
from loopfuse.adapters.claude_agent_sdk import loopfuse_hooks

from .claude_harness import call, run_claude, say
from .fake_anthropic import tool_results

NOTICE = "[loopfuse warning: this mcp__t__probe call ran"


async def test_the_third_identical_call_runs_and_its_result_carries_the_warning() -> None:
    def script(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return call(q="x") if len(tool_results(messages)) < 3 else say("done")

    guard = Guard.from_config({"circuit_breaker": {"warn_at": 2}})
    run = await run_claude(script, loopfuse_hooks(guard))
    assert len(run.tool_runs) == 3
    seen = [str(r["content"]) for r in run.results_seen_by_model()]
    assert len(seen) == 3 and "the same result" in seen[2]
    assert [NOTICE in s for s in seen] == [False, False, True]
    assert guard.stats()["warnings"] == {"duplicate": 1}
