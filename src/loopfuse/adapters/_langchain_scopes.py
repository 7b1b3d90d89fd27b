"""LangChain v1 / LangGraph: whose counts a tool call joins (the guard's agent for a call).

Under ``create_agent`` a run is one invocation, named by a private state field the
middleware's ``before_agent`` sets, within its LangGraph thread when it has one
(``share_thread``: the thread); in a hand-built graph, the thread's latest user message (each
invocation a turn of the thread; ``share_thread``: the thread), else LangGraph's ``run_id``,
else the run's first message that is not a system prompt. A sub-agent run inside a tool adds
the parent checkpoint namespace.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

from langgraph.config import get_config
from langgraph.prebuilt.tool_node import ToolCallRequest

__all__ = ["Turns", "finished_run_scope", "scopes_of"]

_THREADS = 4096  # threads whose latest user message is remembered


class Turns:
    """Each thread's latest user message (a hand-built graph's invocation, which no hook
    announces), read from the messages added since the thread's last call: O(1) a call."""

    def __init__(self) -> None:
        self._read: OrderedDict[str, tuple[int, Any]] = OrderedDict()  # thread: (messages read, its id)
        self._lock = threading.Lock()

    def latest(self, thread: str, messages: Any) -> tuple[Any, Any]:
        """(the id of the thread's latest user message, the one before when this one is new)."""
        with self._lock:
            read, asked = self._read.pop(thread, (0, None))
        before = asked
        if read > len(messages):  # a history rewound or replaced: read again
            read, asked = 0, None
        for at in range(read, len(messages)):
            if getattr(messages[at], "type", None) == "human":
                asked = getattr(messages[at], "id", None)
        with self._lock:
            self._read[thread] = (len(messages), asked)
            if len(self._read) > _THREADS:
                self._read.popitem(last=False)
        return asked, (before if before is not None and before != asked else None)


def scopes_of(request: ToolCallRequest, share_thread: bool, turns: Turns | None) -> tuple[str, str | None]:
    """The call's scope, ``[thread:<id> ]run:<name>``, ``thread:<id> turn:<message id>``,
    ``thread:<id>`` or ``run:<first message id>``, with the parent namespace if nested; and the
    scope of the thread's turn before when this call starts a new one."""
    runtime = getattr(request, "runtime", None)
    config = getattr(runtime, "config", None) or {}
    base, before = _base(runtime, request.state, config, share_thread, turns)
    return _nested(base, runtime, config), None if before is None else _nested(before, runtime, config)


def finished_run_scope(runtime: Any, state: Any, share_thread: bool = False) -> str | None:
    """The scope a run that just ended leaves behind; None for a thread's own scope (its
    conversation may continue) and for the shared ``run`` of runs without ids."""
    config = _node_config()
    if _thread_of(config) is not None and (share_thread or _named_run(state) is None):
        return None
    base, _ = _base(runtime, state, config, share_thread, None)
    return None if base == "run" else _nested(base, runtime, config)


def _base(
    runtime: Any, state: Any, config: Any, share_thread: bool, turns: Turns | None
) -> tuple[str, str | None]:
    """A run named by ``before_agent``, within its thread unless the thread is shared; a
    thread's turn, or the thread; or a run named by LangGraph's ``run_id`` or its first
    message. With the thread's turn before, when a hand-built graph's call starts a new one."""
    thread = _thread_of(config)
    named = _named_run(state)
    if thread is None:
        return (f"run:{named}" if named is not None else _run_of(runtime, state)), None
    if share_thread or named is not None:
        return (f"thread:{thread}" if share_thread else f"thread:{thread} run:{named}"), None
    messages = _messages(state)
    if turns is None or not messages:
        return f"thread:{thread}", None
    asked, before = turns.latest(_nested(f"thread:{thread}", runtime, config), messages)
    turn = f"thread:{thread} turn:{asked}" if asked is not None else f"thread:{thread}"
    return turn, None if before is None else f"thread:{thread} turn:{before}"


def _messages(state: Any) -> Any:
    messages = state.get("messages") if isinstance(state, dict) else getattr(state, "messages", None)
    return messages if isinstance(messages, list) else None


def _named_run(state: Any) -> str | None:
    named = state.get("loopfuse_run") if isinstance(state, dict) else getattr(state, "loopfuse_run", None)
    return named if isinstance(named, str) else None


def _node_config() -> Any:
    """The config of the graph node running now (middleware hooks get no config)."""
    try:
        return get_config()
    except RuntimeError:
        return {}


def _thread_of(config: Any) -> Any:
    return (config.get("configurable") or {}).get("thread_id")


def _nested(base: str, runtime: Any, config: Any) -> str:
    """``base`` within the namespace of the graph node it runs in (a sub-agent called from a tool
    has its own scope), without LangGraph's task ids: each entry of a node is a task of its own,
    and a thread shared across invocations must stay one scope."""
    parent = _namespace(runtime, config).rpartition("|")[0]
    nodes = "|".join(part.partition(":")[0] for part in parent.split("|") if part and not part.isdigit())
    return f"{base} in {nodes}" if nodes else base


def _namespace(runtime: Any, config: Any) -> str:
    info = getattr(runtime, "execution_info", None)
    namespace = getattr(info, "checkpoint_ns", None)
    if namespace is None:
        namespace = (config.get("metadata") or {}).get("checkpoint_ns")
    return namespace if isinstance(namespace, str) else ""


def _run_of(runtime: Any, state: Any) -> str:
    """A run of a hand-built graph: LangGraph's ``run_id``, else its first asked message's id."""
    info = getattr(runtime, "execution_info", None)
    run_id = getattr(info, "run_id", None)
    if run_id is not None:
        return f"run:{run_id}"
    messages = _messages(state)
    first_id = getattr(_first_asked(messages), "id", None) if messages else None
    return f"run:{first_id}" if first_id else "run"


def _first_asked(messages: Any) -> Any:
    """The first message that is not a system prompt (a prompt is often one object every run's
    input reuses, and keeps the id LangGraph gave it the first time); else the first."""
    for message in messages[:8]:
        if getattr(message, "type", None) != "system":
            return message
    return messages[0]
