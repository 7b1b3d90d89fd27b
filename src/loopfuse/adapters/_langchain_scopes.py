"""LangChain v1 / LangGraph: whose counts a tool call joins (the guard's agent for a call).

Under ``create_agent`` a run is one invocation, named by a private state field the
middleware's ``before_agent`` sets, within its LangGraph thread when it has one
(``share_thread``: the thread); in a hand-built graph, the thread id, else LangGraph's
``run_id``, else the run's first message that is not a system prompt. A sub-agent run inside
a tool adds the parent checkpoint namespace.
"""

from __future__ import annotations

from typing import Any

from langgraph.config import get_config
from langgraph.prebuilt.tool_node import ToolCallRequest

__all__ = ["finished_run_scope", "scope_of"]


def scope_of(request: ToolCallRequest, share_thread: bool = False) -> str:
    """``[thread:<id> ]run:<name>``, ``thread:<id>`` or ``run:<first message id>``, with the
    parent namespace if nested."""
    runtime = getattr(request, "runtime", None)
    config = getattr(runtime, "config", None) or {}
    return _nested(_base(runtime, request.state, config, share_thread), runtime, config)


def finished_run_scope(runtime: Any, state: Any, share_thread: bool = False) -> str | None:
    """The scope a run that just ended leaves behind; None for a thread's own scope (its
    conversation may continue) and for the shared ``run`` of runs without ids."""
    config = _node_config()
    if _thread_of(config) is not None and (share_thread or _named_run(state) is None):
        return None
    base = _base(runtime, state, config, share_thread)
    return None if base == "run" else _nested(base, runtime, config)


def _base(runtime: Any, state: Any, config: Any, share_thread: bool) -> str:
    """A run named by ``before_agent``, within its thread unless the thread is shared; a
    thread; or a run named by LangGraph's ``run_id`` or its first message."""
    thread = _thread_of(config)
    named = _named_run(state)
    if thread is None:
        return f"run:{named}" if named is not None else _run_of(runtime, state)
    return f"thread:{thread}" if share_thread or named is None else f"thread:{thread} run:{named}"


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
    messages = state.get("messages") if isinstance(state, dict) else getattr(state, "messages", None)
    first_id = getattr(_first_asked(messages), "id", None) if messages else None
    return f"run:{first_id}" if first_id else "run"


def _first_asked(messages: Any) -> Any:
    """The first message that is not a system prompt (a prompt is often one object every run's
    input reuses, and keeps the id LangGraph gave it the first time); else the first."""
    for message in messages[:8]:
        if getattr(message, "type", None) != "system":
            return message
    return messages[0]
