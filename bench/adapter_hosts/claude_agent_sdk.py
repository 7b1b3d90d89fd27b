"""Claude Agent SDK, end to end: the SDK and its bundled CLI against a local fake Anthropic API,
the scripted model making one distinct in-process MCP tool call a turn. Each run starts the CLI
(about a second), which weighs on the per-call time at small ``calls``."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.adapters.claude_harness import call, run_claude, say
from tests.adapters.fake_anthropic import tool_results

from loopfuse import Guard
from loopfuse.adapters.claude_agent_sdk import loopfuse_hooks

HOST = "claude-agent-sdk (e2e)"


def run(guarded: bool, calls: int) -> None:
    def script(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        done = len(tool_results(messages))
        return call(q=f"item {done}") if done < calls else say("done")

    guard = Guard.from_config({"circuit_breaker": {"max_calls_per_agent": 0}})
    hooks = loopfuse_hooks(guard) if guarded else None
    answer = lambda args: f"answer for {args['q']}"  # noqa: E731 - distinct calls, distinct results
    result = asyncio.run(run_claude(script, hooks, probe_body=answer, max_turns=calls + 5))
    assert len(result.tool_runs) == calls
