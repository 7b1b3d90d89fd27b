"""How the Redis store names an agent: the string in its keys, which every process agrees on."""

from __future__ import annotations

from typing import Any

from .._agents import AgentIdentityError, agent_name

__all__ = ["agent_id", "glob_escape"]


def agent_id(agent: Any) -> str:
    """The string that names ``agent`` in Redis (``loopfuse._agents.agent_name``);
    ``AgentIdentityError`` (a ``ConfigError``) when it has none, or one no key can hold (not
    valid UTF-8: a lone surrogate): the guard fails open."""
    name = agent_name(agent)
    if name is not None and (name.isascii() or _utf8(name)):
        return name
    if name is not None:
        raise AgentIdentityError(
            f"agent = <{type(agent).__name__}> cannot be keyed in the Redis store: its name is not valid UTF-8"
        )
    raise AgentIdentityError(
        f"agent = <{type(agent).__name__}> cannot be keyed in the Redis store: state shared "
        "by several processes needs a name every process agrees on, so pass a non-empty string "
        "id (agent='run-42') or an object with a string attribute id, agent_id, session_id or name"
    )


def _utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def glob_escape(text: str) -> str:
    return "".join("\\" + c if c in "*?[]\\" else c for c in text)
