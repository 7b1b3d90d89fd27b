"""The texts a model sees when a call is denied. They never contain argument values."""

from __future__ import annotations

from .decision import Denial

__all__ = ["DEFAULT_MESSAGES", "RULE_MESSAGES", "STORE_DENIED", "denial_message"]

_CHANGE = (
    "Stop repeating it: change your approach, or report to the user what you found and what is blocking you."
)

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

_REFUSED = "loopfuse refused this {tool} call: "
_STOP = "Stop calling tools and report to the user what you found so far: every further tool call will be refused."
_NEW = "running it again will not tell you anything new. "

# One sentence per rule (``Denial.rule``), naming its configuration key and value.
RULE_MESSAGES = {
    "circuit_breaker.max_calls_per_agent": (
        "this agent has made {count} tool calls, the most allowed (max_calls_per_agent {limit}). " + _STOP
    ),
    "circuit_breaker.duplicate_limit": (
        "the identical call already ran {count} times among the last {window} calls "
        "(duplicate_limit {limit}), so " + _NEW + _CHANGE
    ),
    "circuit_breaker.result_limit": (
        "the identical call already ran {count} times among the last {window} calls without a new "
        "result (result_limit {limit}), so " + _NEW + _CHANGE
    ),
    "tools.duplicate_limit": (
        "the identical call already ran {count} times among the last {window} calls "
        "(duplicate_limit {limit} for {tool}), so " + _NEW + _CHANGE
    ),
    "circuit_breaker.same_result_limit": (
        "the identical call returned the same result {count} times in a row "
        "(same_result_limit {limit}), so " + _NEW + _CHANGE
    ),
    "circuit_breaker.progress_limit": (
        "the identical call ran {count} times in a row (progress_limit {limit}), new results "
        "or not. " + _CHANGE
    ),
    "loop_brake.max_repeats": (
        "you asked for the identical call {count} times in a row (max_repeats {limit}). " + _CHANGE
    ),
    "same_error.limit": (
        "{tool} failed with the same error {count} times in a row (same_error limit {limit}). "
        "Retrying will fail again: fix the cause or " + _CHANGE[0].lower() + _CHANGE[1:]
    ),
    "same_error.identical_limit": (
        "the identical call failed with the same error {count} times in a row "
        "(same_error identical_limit {limit}). " + _CHANGE
    ),
    "near_duplicate.limit": (
        "a call equal to this one except for ids, timestamps and similar changing values ran "
        "{count} times among the last {near_window} calls (near_duplicate limit {limit}). " + _CHANGE
    ),
    "tools.near_duplicate_limit": (
        "a call equal to this one except for ids, timestamps and similar changing values ran "
        "{count} times among the last {near_window} calls (near_duplicate_limit {limit} for "
        "{tool}). " + _CHANGE
    ),
    "cycle.min_repeats": (
        "the same sequence of calls ran {count} times back to back (cycle min_repeats {limit}). " + _CHANGE
    ),
}

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
    are the ones it names), else the default text for the denial's kind."""
    if template:
        values = {"count": denial.count, "limit": denial.limit, "kind": denial.kind, "rule": denial.rule}
        return template.format(tool=tool, **values)
    sentence = RULE_MESSAGES.get(denial.rule)
    if sentence is None:
        text = DEFAULT_MESSAGES.get(denial.kind, _GENERIC)
        return text.format(tool=tool, count=denial.count, limit=denial.limit, kind=denial.kind)
    values = {"count": denial.count, "limit": denial.limit, "window": window, "near_window": near_window}
    return (_REFUSED + sentence).format(tool=tool, **values)
