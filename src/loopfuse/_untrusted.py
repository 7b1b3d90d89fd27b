"""Reading the caller's objects without trusting them: tool names, exceptions and results.

Every function here returns a value (or None for "cannot be judged") whatever the object
does when read: its own methods may raise anything.
"""

from __future__ import annotations

from typing import Any

from ._failure_text import answers_failure, json_text_fails, opens_as_failure, reads_as_failure
from ._state import ToolResult
from ._volatile import result_text, text_digests

__all__ = ["BAD_TOOL", "error_text", "is_exception", "tool_name", "tool_result"]

BAD_TOOL = "<invalid tool name>"  # names a tool that is not a string in decisions and stats


def tool_name(tool: Any) -> str | None:
    """``tool`` as a plain ``str`` (a subclass's own methods never run); None if not a string."""
    try:
        return str.__str__(tool) if isinstance(tool, str) else None
    except Exception:
        return None


def is_exception(value: Any) -> bool:
    try:
        return isinstance(value, BaseException)
    except Exception:
        return False


def error_text(error: Any) -> Any:
    """An exception as its type and message (the same failure gives the same text)."""
    if not isinstance(error, BaseException):
        return error
    try:
        message = str(error)
    except Exception:  # a broken __str__ must not reach the host
        message = ""
    return f"{type(error).__name__}: {message}"


def tool_result(result: Any, ok: bool | None) -> ToolResult | None:
    """The digests of a result (errors with numbers masked too); None if it cannot be read.
    A result that opens with a failure's verdict is a failure whatever the host said; a
    success whose text reads as a failure elsewhere is kept as a result of unknown outcome.
    A content list (MCP's, a chat message's) is read by its text blocks."""
    try:
        text = result_text(result)
        said = text if type(result) is str else _said(result, text)
        if ok is not False and (opens_as_failure(said) or _json_fails(result, said)):
            ok = False
        digest, error = text_digests(text, ok is False)
        if ok is True and reads_as_failure(said):
            return ToolResult(digest, None, error)
        return ToolResult(digest, ok if type(ok) is bool else None, error)
    except Exception:  # unserializable, or the caller's objects raise while read
        return None


def _json_fails(result: Any, said: str) -> bool:
    """Whether an answer is an API's failure: a ``dict`` by its members, a text by the object it writes."""
    return answers_failure(result) if type(result) is dict else json_text_fails(said)


_BLOCKS = 64  # text blocks read at most: a bounded cost per result


def _said(result: Any, text: str) -> str:
    """What the model reads of ``result``: the text blocks of a content list (an MCP answer's
    ``content``, a chat message's blocks, or one such block alone, as the OpenAI Agents SDK
    hands over an MCP tool's answer) joined, else ``text``, the result as written."""
    blocks = result
    if type(result) is dict:
        blocks = result.get("content")
        if type(blocks) is not list:
            blocks = [result]
    elif type(blocks) is not list:
        return text
    said = [block["text"] for block in blocks[:_BLOCKS] if _text_block(block)]
    return "\n".join(said) if said else text


def _text_block(block: Any) -> bool:
    """Whether ``block`` is a text block; its values are compared only once they are strings
    (a caller's object's ``__eq__`` never runs)."""
    if type(block) is not dict:
        return False
    kind = block.get("type")
    return type(kind) is str and kind == "text" and type(block.get("text")) is str
