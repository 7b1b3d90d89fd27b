"""The texts a model sees when a call is denied. They never contain argument values."""

from __future__ import annotations

from ._shown import shown_tool
from .breakers._text import CHANGE as _CHANGE
from .breakers._text import REFUSED as _REFUSED
from .breakers.registry import rule_messages
from .decision import Denial

__all__ = ["DEFAULT_MESSAGES", "RULE_MESSAGES", "STORE_DENIED", "denial_message"]

DEFAULT_MESSAGES = {
    "duplicate": (
        "loopfuse refused this {tool} call: the identical call already ran {count} times "
        "among your recent calls (limit {limit}), so running it again will not tell you "
        "anything new. " + _CHANGE
    ),
    "cap": (
        "loopfuse refused this {tool} call: this agent has made {count} tool calls and "
        "reached its limit of {limit}, so every further tool call will be refused. Stop "
        "calling tools and report to the user what you found so far."
    ),
    "repeat": (
        "loopfuse refused this {tool} call: you asked for the identical call {count} times "
        "in a row (at most {limit} allowed). " + _CHANGE
    ),
}

# One sentence per rule (``Denial.rule``), naming its configuration key and value: each
# breaker's module owns its own (``MESSAGES``).
RULE_MESSAGES = rule_messages()

STORE_DENIED = (
    "loopfuse refused this {tool} call: the guard's shared state store cannot be reached, and "
    "it is configured to refuse calls it cannot judge. Wait and retry later, or report to the "
    "user that the guard's store is down."
)

_GENERIC = (
    "loopfuse refused this {tool} call: it repeats a pattern of calls that is not making "
    "progress ({kind}: {count} times, limit {limit}). " + _CHANGE
)


def denial_message(
    template: str | None, tool: str, denial: Denial, *, window: int = 200, near_window: int = 50
) -> str:
    """The denial text from ``template``, else the sentence of the denial's rule (the windows
    are the ones it names), else the default text for the denial's kind. A template whose
    format spec suits the sample values checked at construction but not this denial's
    (``{limit:c}`` with a limit past U+10FFFF) gives the built-in text: the call stays denied."""
    tool = shown_tool(tool)
    if template:
        values = {"count": denial.count, "limit": denial.limit, "kind": denial.kind, "rule": denial.rule}
        try:
            return template.format(tool=tool, **values)
        except Exception:  # ValueError, TypeError, OverflowError, or a custom breaker's value's own
            pass
    sentence = RULE_MESSAGES.get(denial.rule)
    if sentence is None:
        text = DEFAULT_MESSAGES.get(denial.kind, _GENERIC)
        return text.format(tool=tool, count=denial.count, limit=denial.limit, kind=denial.kind)
    values = {"count": denial.count, "limit": denial.limit, "window": window, "near_window": near_window}
    return (_REFUSED + sentence).format(tool=tool, **values)
