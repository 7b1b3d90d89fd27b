"""How the guard names an agent: one rule for the Redis key and the incident log's label.

An agent is a non-empty string, a UUID or an integer (not a bool), or an object whose first id
attribute (``id``, ``agent_id``, ``session_id``, ``name``, ``uuid``, in that order) is one. Reading the agent never raises: an object whose attributes raise
when read simply has no name. The in-process store also keys agents without a name (by
identity or by value); the Redis store cannot, and such an agent fails open there.
"""

from __future__ import annotations

import uuid
from typing import Any

from .errors import ConfigError

__all__ = ["ID_ATTRIBUTES", "AgentIdentityError", "agent_label", "agent_name"]

ID_ATTRIBUTES = ("id", "agent_id", "session_id", "name", "uuid")


class AgentIdentityError(ConfigError):
    """An agent the Redis store cannot name (the guard fails open on it)."""


def agent_name(agent: Any) -> str | None:
    """The agent's name under the rule above, or None when it has none."""
    try:
        own = _id_value(agent)
        if own is not None or isinstance(agent, str):
            return own
        for attribute in ID_ATTRIBUTES:
            name = _id_value(getattr(agent, attribute, None))
            if name is not None:
                return name
    except Exception:  # the caller's object misbehaves: it has no name
        return None
    return None


def _id_value(value: Any) -> str | None:
    if isinstance(value, str):
        return str.__str__(value) or None
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return str(int(value))
    return None


def agent_label(agent: Any) -> str | dict[str, list[str]]:
    """How the incident log names an agent: its name, an int or tuple as text, or its keys."""
    name = agent_name(agent)
    if name is not None:
        return name
    try:
        if isinstance(agent, str):
            return str.__str__(agent)
        if type(agent) in (int, bool, tuple):
            return str(agent)
        return {"agent_keys": _attribute_names(agent)}
    except Exception:
        return {"agent_keys": []}


def _attribute_names(agent: Any) -> list[str]:
    names = getattr(agent, "__dict__", None)
    if type(names) is dict:
        return sorted(str.__str__(n) for n in names if isinstance(n, str))
    return sorted(str.__str__(n) for n in dir(agent) if isinstance(n, str) and not n.startswith("_"))
