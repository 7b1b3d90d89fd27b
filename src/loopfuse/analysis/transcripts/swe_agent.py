"""SWE-agent ``.traj`` (0.x and 1.x) and mini-swe-agent ``.traj.json`` trajectories.

Both are one JSON document, read whole (up to ``MAX_DOCUMENT_BYTES``).

SWE-agent: ``{"trajectory": [{"action", "observation", "response", "thought", "state",
("execution_time", "query" in 1.x)}], "history": [{"role", "content", "agent",
("action" on assistant messages)}], "info": {...}}``. Each step's action is one command
string; the tool is its first word when that is a SWE-agent command (``open``, ``edit``,
``str_replace_editor``...), else ``bash``; the arguments are ``{"command": action}``.
When the history names the agent of every action (multi-role systems such as CodeR),
those roles are the agents and the reply shown to each role is the result.

mini-swe-agent: ``{"info", "messages": [{"role", "content", ("extra")}],
"trajectory_format": "mini-swe-agent-1"|"mini-swe-agent-1.1"}``; each assistant message's
bash block (or ``extra.actions`` / ``tool_calls`` in 2.x) is one ``bash`` call, the next
message its result (``<returncode>`` gives ``ok``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .base import (
    RESULT_CHARS,
    CallQueue,
    ReadTally,
    excerpt,
    load_document,
    parse_arguments,
    plausible_time,
)
from .model import ToolCall

__all__ = ["read_mini_swe_agent", "read_swe_agent", "swe_agent_ok", "swe_agent_tool"]

SWE_AGENT_COMMANDS = frozenset(
    {
        "open", "goto", "scroll_down", "scroll_up", "create", "edit", "search_file", "search_dir",
        "find_file", "submit", "plan", "str_replace_editor", "insert", "filemap", "exit_forfeit",
    }
)  # fmt: skip
_FAILED = re.compile(
    r"^(Your proposed edit has introduced new syntax error"
    r"|Traceback \(most recent call last\)|\S+: line \d+: )"
)
_BASH_BLOCK = re.compile(r"```(?:bash|sh|mswea_bash_command)?\s*\n(.*?)\n```", re.DOTALL)
_RETURN_CODE = re.compile(r"<returncode>\s*(-?\d+)\s*</returncode>|\"returncode\":\s*(-?\d+)")


def swe_agent_tool(action: str) -> str:
    words = action.split(maxsplit=1)
    return words[0] if words and words[0] in SWE_AGENT_COMMANDS else "bash"


def swe_agent_ok(output: str | None) -> bool | None:
    """False on SWE-agent's known failure texts, else unknown (it records no exit code)."""
    return False if output and _FAILED.search(output) else None


def read_swe_agent(path: Path, tally: ReadTally) -> Iterator[ToolCall]:
    doc = load_document(path, tally)
    steps = doc.get("trajectory") if isinstance(doc, dict) else None
    if not isinstance(steps, list):
        if doc is not None:
            tally.skip_malformed(path, "JSON, but no SWE-agent trajectory list in it")
        return
    run = _run_name(path)
    history = doc.get("history")
    pairs = _history_actions(history) if isinstance(history, list) else []
    if len(pairs) == len(steps) and pairs:
        yield from _from_history(run, pairs)
    else:
        yield from _from_steps(run, steps)


def _run_name(path: Path) -> str:
    name = path.name
    for suffix in (".traj.json", ".traj", ".json"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return path.stem


def _history_actions(history: list[Any]) -> list[tuple[dict[str, Any], str | None]]:
    """Each assistant action with the reply shown to the same agent before the next action."""
    pairs: list[tuple[dict[str, Any], str | None]] = []
    waiting = False
    for message in history:
        if not isinstance(message, dict):
            continue
        if message.get("role") == "assistant" and isinstance(message.get("action"), str):
            pairs.append((message, None))
            waiting = True
        elif (
            waiting
            and message.get("role") in ("user", "tool")
            and message.get("agent") == pairs[-1][0].get("agent")
        ):
            pairs[-1] = (pairs[-1][0], excerpt(message.get("content"), RESULT_CHARS))
            waiting = False
    return pairs


def _from_history(run: str, pairs: list[tuple[dict[str, Any], str | None]]) -> Iterator[ToolCall]:
    for step, (message, reply) in enumerate(pairs):
        command = message["action"].strip()
        agent = str(message.get("agent") or "main")
        args = {"command": command}
        yield ToolCall(run, agent, step, swe_agent_tool(command), args, None, reply, swe_agent_ok(reply))


def _from_steps(run: str, steps: list[Any]) -> Iterator[ToolCall]:
    clock = 0.0
    for step, entry in enumerate(steps):
        if not isinstance(entry, dict) or not isinstance(entry.get("action"), str):
            continue
        command = entry["action"].strip()
        seconds = plausible_time(entry.get("execution_time"))
        clock += seconds or 0.0
        time = plausible_time(clock) if seconds is not None else None
        output = excerpt(entry.get("observation"), RESULT_CHARS)
        args = {"command": command}
        yield ToolCall(run, "main", step, swe_agent_tool(command), args, time, output, swe_agent_ok(output))


def read_mini_swe_agent(path: Path, tally: ReadTally) -> Iterator[ToolCall]:
    doc = load_document(path, tally)
    messages = doc.get("messages") if isinstance(doc, dict) else None
    if not isinstance(messages, list):
        if doc is not None:
            tally.skip_malformed(path, "JSON, but no mini-swe-agent messages list in it")
        return
    queue = CallQueue(_run_name(path))
    waiting: list[str] = []
    for message in messages:
        if isinstance(message, dict):
            yield from _mini_message(message, queue, waiting)
    yield from queue.drain()


def _mini_message(message: dict[str, Any], queue: CallQueue, waiting: list[str]) -> Iterator[ToolCall]:
    if message.get("role") == "assistant":
        for tool, args, key in _mini_actions(message, queue.count):
            waiting.append(key)
            yield from queue.add(key, "main", tool, args, None)
    elif waiting and message.get("role") in ("user", "tool"):
        answered = message.get("tool_call_id")
        key = answered if isinstance(answered, str) and answered in waiting else waiting[0]
        waiting.remove(key)
        output = excerpt(message.get("content"), RESULT_CHARS)
        yield from queue.resolve(key, output, _mini_ok(message, output))


def _mini_actions(message: dict[str, Any], count: int) -> list[tuple[str, Any, str]]:
    extra = message.get("extra")
    actions = extra.get("actions") if isinstance(extra, dict) else None
    if isinstance(actions, list) and actions:
        return [(_action_tool(a), _action_args(a), f"m{count}.{i}") for i, a in enumerate(actions)]
    calls = message.get("tool_calls")
    if isinstance(calls, list) and calls:
        return [_mini_tool_call(c, f"m{count}.{i}") for i, c in enumerate(calls) if isinstance(c, dict)]
    found = (
        _BASH_BLOCK.findall(message.get("content") or "") if isinstance(message.get("content"), str) else []
    )
    return [("bash", {"command": found[0].strip()}, f"m{count}")] if len(found) == 1 else []


def _action_tool(action: Any) -> str:
    return str(action.get("tool") or "bash") if isinstance(action, dict) else "bash"


def _action_args(action: Any) -> Any:
    if isinstance(action, dict) and "command" in action:
        return {"command": action["command"]}
    return action


def _mini_tool_call(call: dict[str, Any], key: str) -> tuple[str, Any, str]:
    found = call.get("function")
    function: dict[str, Any] = found if isinstance(found, dict) else {}
    name = str(function.get("name") or "bash")
    return name, parse_arguments(function.get("arguments")), str(call.get("id") or key)


def _mini_ok(message: dict[str, Any], output: str | None) -> bool | None:
    extra = message.get("extra")
    code = extra.get("returncode") if isinstance(extra, dict) else None
    if isinstance(code, int):
        return code == 0
    found = _RETURN_CODE.search(output or "")
    return None if found is None else (found.group(1) or found.group(2)) == "0"
