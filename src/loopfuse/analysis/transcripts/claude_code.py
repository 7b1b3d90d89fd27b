"""Claude Code session JSON lines (``~/.claude/projects/<project>/<session>.jsonl``).

Each line is one record: ``{"type": "assistant"|"user"|..., "sessionId", "uuid",
"parentUuid", "isSidechain", "timestamp", "message": {"role", "content": [blocks]}}``.
A ``tool_use`` block (``id``, ``name``, ``input``) of a ``user`` or ``assistant`` record is a
call; a later ``tool_result`` block (``tool_use_id``, ``content``, ``is_error``) is its result. Sub-agents
(``isSidechain: true``) are separate agents: named by ``agentId`` when recorded (newer
versions write them to ``agent-<id>.jsonl``), else by the first record of their chain.
Lines that mention no tool block and no sidechain are not parsed.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .base import CallQueue, ReadTally, json_lines, parse_time
from .model import ToolCall

__all__ = ["looks_claude_code", "read_claude_code"]

# Record types a session may open with: since CLI 2.1 a permission mode, each SessionStart
# hook's output (``attachment``), hook progress, the last prompt and the session's title.
_TYPES = frozenset(
    {
        "user", "assistant", "summary", "system", "file-history-snapshot", "queue-operation",
        "permission-mode", "attachment", "progress", "last-prompt", "ai-title", "custom-title",
    }
)  # fmt: skip
_MARKERS = ("sessionId", "parentUuid", "leafUuid", "messageId", "isSidechain")
_WANTED = ('"tool_use"', '"tool_result"', '"isSidechain":true', '"isSidechain": true')
_CHAIN_LIMIT = 100_000
# The records that are the conversation's messages. Others may hold messages too: since CLI 2.1
# an ``api-request-blob`` record logs each request's whole conversation, every earlier call again.
_MESSAGES = frozenset({"user", "assistant"})


def looks_claude_code(row: dict[str, Any]) -> bool:
    kind = row.get("type")
    return isinstance(kind, str) and kind in _TYPES and any(m in row for m in _MARKERS)


def read_claude_code(path: Path, tally: ReadTally) -> Iterator[ToolCall]:
    queue: CallQueue | None = None
    chains = _Sidechains()
    for row in json_lines(path, tally, _WANTED):
        if queue is None:
            queue = CallQueue(str(row.get("sessionId") or path.stem))
        message = row.get("message") if row.get("type") in _MESSAGES else None
        content = message.get("content") if isinstance(message, dict) else None
        agent = chains.agent(row)
        if isinstance(content, list):
            yield from _blocks(content, queue, agent, row.get("timestamp"))
    if queue is not None:
        yield from queue.drain()


def _blocks(blocks: list[Any], queue: CallQueue, agent: str, stamp: Any) -> Iterator[ToolCall]:
    for block in blocks:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "tool_use" and isinstance(block.get("name"), str):
            yield from queue.add(block.get("id"), agent, block["name"], block.get("input"), parse_time(stamp))
        elif kind == "tool_result":
            ok = not block["is_error"] if isinstance(block.get("is_error"), bool) else None
            yield from queue.resolve(block.get("tool_use_id"), block.get("content"), ok)


class _Sidechains:
    """Which agent a record belongs to: ``main`` or one sidechain sub-agent."""

    def __init__(self) -> None:
        self._by_uuid: dict[str, str] = {}

    def agent(self, row: dict[str, Any]) -> str:
        if not row.get("isSidechain"):
            return "main"
        if isinstance(row.get("agentId"), str):
            return f"sidechain-{row['agentId']}"
        parent = row.get("parentUuid")
        uuid = str(row.get("uuid") or "")
        name = self._by_uuid.get(parent) if isinstance(parent, str) else None
        if name is None:
            name = f"sidechain-{uuid[:8] or len(self._by_uuid)}"
        if len(self._by_uuid) >= _CHAIN_LIMIT:
            self._by_uuid.clear()
        self._by_uuid[uuid] = name
        return name
