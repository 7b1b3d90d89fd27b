"""Runs the real Claude Agent SDK and its bundled CLI against the fake Anthropic API."""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

from claude_agent_sdk import (
    AgentDefinition,
    ClaudeAgentOptions,
    ClaudeSDKClient,
    HookMatcher,
    create_sdk_mcp_server,
    query,
    tool,
)

from .fake_anthropic import FakeAnthropic, Script, tool_results

PROBE = "mcp__t__probe"
RUN_TIMEOUT = 90.0


@dataclass
class ClaudeRun:
    """What one scripted run produced."""

    messages: list[Any] = field(default_factory=list)
    tool_runs: list[dict[str, Any]] = field(default_factory=list)
    model_requests: list[dict[str, Any]] = field(default_factory=list)
    home: str = ""  # the CLI's config directory: its session transcripts are under projects/

    def results_seen_by_model(self) -> list[dict[str, Any]]:
        return tool_results(self.model_requests[-1]["messages"]) if self.model_requests else []

    def final(self) -> Any:
        return next(m for m in reversed(self.messages) if type(m).__name__ == "ResultMessage")


def call(name: str = PROBE, **args: Any) -> list[dict[str, Any]]:
    return [{"type": "tool_use", "name": name, "input": args}]


def say(text: str) -> list[dict[str, Any]]:
    return [{"type": "text", "text": text}]


def first_user_text(messages: list[dict[str, Any]]) -> str:
    content = messages[0]["content"]
    if isinstance(content, str):
        return content
    return " ".join(str(b.get("text", "")) for b in content if isinstance(b, dict))


def cli_env(base_url: str, home: str) -> dict[str, str]:
    """Environment for the CLI: the fake API, a throwaway home, no side traffic."""
    return {
        "ANTHROPIC_BASE_URL": base_url,
        "ANTHROPIC_API_KEY": "sk-ant-dummy",
        "HOME": home,
        "CLAUDE_CONFIG_DIR": home,
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_ERROR_REPORTING": "1",
    }


async def run_claude(
    script: Script,
    hooks: dict[str, list[HookMatcher]] | None,
    *,
    probe_body: Callable[[dict[str, Any]], str] | None = None,
    with_subagent: bool = False,
    max_turns: int = 40,
) -> ClaudeRun:
    """One ``query`` of the real SDK + CLI, the model answered by ``script``."""
    run = ClaudeRun()

    @tool("probe", "Look something up", {"q": str})
    async def probe(args: dict[str, Any]) -> dict[str, Any]:
        run.tool_runs.append(args)
        text = probe_body(args) if probe_body else "the same result"  # loops get the same answer
        return {"content": [{"type": "text", "text": text}]}

    home = run.home = tempfile.mkdtemp(prefix="loopfuse-claude-")
    with FakeAnthropic(script) as fake:
        options = ClaudeAgentOptions(
            mcp_servers={"t": create_sdk_mcp_server("t", tools=[probe])},
            agents=_helper() if with_subagent else None,
            tools=["Agent"] if with_subagent else [],
            allowed_tools=[PROBE, "Agent"],
            env=cli_env(fake.url, home),
            cwd=home,
            max_turns=max_turns,
            hooks=hooks,  # type: ignore[arg-type]
        )
        await asyncio.wait_for(_collect(query(prompt="go", options=options), run.messages), RUN_TIMEOUT)
        run.model_requests = fake.requests
    return run


async def run_claude_session(
    script: Script, hooks: dict[str, list[HookMatcher]], prompts: list[str]
) -> ClaudeRun:
    """One ``ClaudeSDKClient`` conversation of the real SDK + CLI: ``prompts`` one after another,
    each answered to the end, the model answered by ``script``."""
    run = ClaudeRun()

    @tool("probe", "Look something up", {"q": str})
    async def probe(args: dict[str, Any]) -> dict[str, Any]:
        run.tool_runs.append(args)
        return {"content": [{"type": "text", "text": "the same result"}]}

    async def converse(client: ClaudeSDKClient) -> None:
        for prompt in prompts:
            await client.query(prompt)
            await _collect(client.receive_response(), run.messages)

    home = tempfile.mkdtemp(prefix="loopfuse-claude-")
    with FakeAnthropic(script) as fake:
        options = ClaudeAgentOptions(
            mcp_servers={"t": create_sdk_mcp_server("t", tools=[probe])},
            tools=[],
            allowed_tools=[PROBE],
            env=cli_env(fake.url, home),
            cwd=home,
            hooks=hooks,  # type: ignore[arg-type]
        )
        async with ClaudeSDKClient(options=options) as client:
            await asyncio.wait_for(converse(client), RUN_TIMEOUT)
        run.model_requests = fake.requests
    return run


def since_last_prompt(messages: list[dict[str, Any]]) -> int:
    """How many tool results the model got since the user's last prompt."""
    results = 0
    for message in reversed(messages):
        if message["role"] != "user":
            continue
        content = message["content"]
        if isinstance(content, str) or not any(b.get("type") == "tool_result" for b in content):
            return results
        results += 1
    return results


def _helper() -> dict[str, AgentDefinition]:
    return {"helper": AgentDefinition(description="helps", prompt="You help.", tools=[PROBE])}


async def _collect(messages: AsyncIterator[Any], into: list[Any]) -> None:
    async for message in messages:
        into.append(message)
