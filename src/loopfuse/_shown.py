"""How a text shows a tool's name: the caller's text, which a model can make up."""

from __future__ import annotations

__all__ = ["TOOL_SHOWN", "logged", "shown_tool"]

TOOL_SHOWN = 128  # characters: MCP's longest recommended tool name


def shown_tool(tool: object) -> str:
    """``tool`` as a text shows it (formatted, when it is not a string): cut to ``TOOL_SHOWN``
    characters, marked by "..."."""
    text = tool if type(tool) is str else f"{tool}"
    return text if len(text) <= TOOL_SHOWN else text[: TOOL_SHOWN - 3] + "..."


def logged(text: str) -> str:
    """``text`` for a log line: characters that are not printable (a newline, an escape code, a
    lone surrogate) written as Python escapes, so a name cannot forge a line or colour a terminal."""
    if text.isprintable():
        return text
    return "".join(
        c if c.isprintable() else c.encode("unicode_escape", "backslashreplace").decode() for c in text
    )
