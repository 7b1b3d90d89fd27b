"""Whether a result reads as a failure, whatever the host called it.

Hosts that see no exception call every returned value a success (``guard.wrap``, smolagents,
an MCP server that does not set ``isError``, a shell tool that prints its exit code). Two
readings, of different strength, both of a bounded part of the text with plain searches:

- ``opens_as_failure``: the answer opens with a failure's verdict ("Error: ...", a traceback,
  a JSON object whose first member is ``"error"``), as a tool that answers its errors as text
  does. It is a failure for every breaker, as is a ``dict`` answer that ``answers_failure``.
- ``reads_as_failure``: its start or its last lines name one (a test runner's "1 failed", a
  non-zero exit code), where a passing output may also quote code or logs. It only keeps the
  re-run rule (``breakers/_rerun.py``) from excusing the result as a success that checks an edit.

A failure named only in the middle of a long output goes unnoticed.
"""

from __future__ import annotations

import re

from ._calls import json_object

__all__ = ["answers_failure", "json_text_fails", "opens_as_failure", "reads_as_failure"]

_HEAD, _TAIL = 64, 256
_VERDICTS = (
    "traceback (most recent call last)",
    "npm err!",
    "command not found",
    "no such file or directory",
)
_EXIT_CODES = ("exit code", "exit status", "returncode")
_NONZERO = re.compile(r"\W{0,4}-?[1-9]")
_WORDS = ("error", "exception", "fail", "fatal", "panic")
_ENDINGS = frozenset({"error", "exception"})  # may end a name: "KeyError", "RuntimeException"
# Before a numbered item's or a heading's first word ("2. Errors", "## Errors"), and a count after it.
_TITLE = re.compile(r"(?:(?<=\s)|^)(?:\d{1,3}\.|#{1,6}) \Z")
_COUNTED = re.compile(r"[ \t]*[:=]?[ \t]*\d")
# A failure word's end: "failed", "failures", "panicked", "KeyError:"; not a count or field of none
# ("errors: 0", TAP's "# fail 0", JSON's "error":null, Gemini CLI's "Error: (none)") nor a name ("errors.py",
# "errors/", "error-handler.test.ts", Rust's "error::tests", pytest's "TestErrors::test_x").
_WORD_END = re.compile(
    r"(?:ed|ked|ure|ing)?s?\b(?!\"? ?[:=] ?(?:0\b|null|none|false|\[\]|\"\"|\{\}|\(none\))| 0\b)(?![./\-]\w|::)"
)


# A JSON object whose first member is an API's failure: {"error": ...} or {"errors": [...]} with
# something in it, {"ok": false}, {"success": false}, MCP's {"isError": true}, {"status": "error"}.
_JSON_VERDICT = (
    r"|\{\s*\"(?:errors?\"\s*:\s*+(?!null\b|false\b|0\b|\[\s*\]|\{\s*\}|\"\")"
    r"|(?:ok|success)\"\s*:\s*false\b|iserror\"\s*:\s*true\b|status\"\s*:\s*\"error\")"
)
# An HTTP client's failure, as a tool that returns the response's text or the exception's says
# it: a status line ("HTTP/1.1 503"), urllib's "HTTP Error 503: ...", requests' "503 Server
# Error: ... for url", httpx's "Server error '503 ...'", aiohttp's "503, message=...", axios's
# "Request failed with status code 500", a proxy's error page, "Status code: 429", "404 Not Found",
# "Read timed out.", "Connection refused", "connect ECONNREFUSED". A status or verdict said
# alone, its line ending or going on with a colon, a stop or "for url"; not one that is counted
# or named ("HTTP 500 errors: 0", "401 Unauthorized attempts", "Connection refused: 0",
# "Connection refused on port 8080", "Status: 404 of 1000 pages").
_HTTP_REASONS = (
    "bad request|unauthori[sz]ed|forbidden|not found|method not allowed|request time-?out|conflict"
    "|gone|payload too large|unprocessable (?:entity|content)|too many requests|internal server error"
    "|not implemented|bad gateway|service unavailable|gateway time-?out|(?:client|server) error"
)
_ALONE = r"(?!\s*[:=]\s*(?:0|none|null)\b)(?=\s*(?:$|[.:;,(\n]|for\b|after\b))"
_HTTP_VERDICT = (
    r"|http/\d(?:\.\d)? [45]\d\d\b|http error [45]\d\d\b|request failed with status code [45]\d\d\b"
    rf"|(?:(?:http|response) )?status(?: code)?\W{{1,3}}[45]\d\d(?: (?:{_HTTP_REASONS}))?{_ALONE}"
    rf"|[45]\d\d[ :-]+(?:{_HTTP_REASONS}){_ALONE}|(?:client|server) error '[45]\d\d\b|[45]\d\d, message="
    r"|(?:<!doctype html>)?\s*<html(?: [^>]*)?>\s*<head>\s*<title>(?:error )?[45]\d\d\b"
    rf"|(?:request|read|connect|connection|operation) timed out{_ALONE}|connection (?:refused|reset|aborted){_ALONE}"
    r"|connect econnrefused\b|https?connectionpool\(host=|upstream connect error\b"
)
# A text that opens with a failure's verdict: "Error: ...", "KeyError: 'x'", "fatal: ...", "Failed
# to ...", a traceback, "Exit code: 1", an HTTP failure or a JSON one (above); not a log line
# ("ERROR:root:...", "ERROR 2024-01-01 ...") nor a count of none ("Errors: 0").
_OPENS = re.compile(
    r"\s*(?:traceback \(most recent call last\)|npm err!|fail(?:ed)? to\b"
    r"|(?:exit (?:code|status)|returncode)\W{0,4}-?[1-9]"
    r"|(?:[\w.]*(?:error|exception)|fatal|panic|fail(?:ed|ure)?)(?::(?:\s|$)|!|[ \t]*(?:\n|$))"
    + _HTTP_VERDICT
    + _JSON_VERDICT
    + ")"
)


def answers_failure(result: dict[str, object]) -> bool:
    """Whether a tool's answer, a ``dict``, is an API's failure: an ``error`` or ``errors``
    member holding something, ``ok`` or ``success`` false, ``isError`` true (MCP), ``status``
    ``"error"``. A member's value is compared only once it is a plain JSON value (a caller's
    object's ``__eq__`` never runs)."""
    try:
        if _holds_something(result.get("error")) or _holds_something(result.get("errors")):
            return True
        if result.get("ok") is False or result.get("success") is False or result.get("isError") is True:
            return True
        status = result.get("status")
        return type(status) is str and status == "error"
    except Exception:  # a key's own __eq__ raised while the members were looked up
        return False


_JSON_READ = 8_192  # a JSON text is parsed up to this length: a bounded cost per answer
_FAILURE_KEY = re.compile(r'"(?:errors?|ok|success|isError|status)"\s*:')


def json_text_fails(text: str) -> bool:
    """Whether ``text``, the JSON of an object of up to 8 KiB, ``answers_failure`` by any top-level
    member (GraphQL's ``{"data": null, "errors": [...]}``); only a text naming such a member is
    parsed."""
    if len(text) > _JSON_READ or _FAILURE_KEY.search(text) is None:
        return False
    value = json_object(text)
    return value is not None and answers_failure(value)


def _holds_something(value: object) -> bool:
    """Whether a failure member holds a failure: not None, false, 0, "", [] or {}."""
    if value is None or value is False:
        return False
    if type(value) in (str, list, dict, tuple):
        return len(value) > 0  # type: ignore[arg-type]
    if type(value) in (int, float):
        return value != 0
    return True  # any other object (an exception, a model) is something


def opens_as_failure(text: str) -> bool:
    """Whether ``text`` opens with a failure's verdict, as a tool that answers its errors as
    text does ("Error: service unavailable", "ERROR: No replacement was performed", "KeyError:
    'x'", "fatal: not a git repository", "Failed to fetch", "Exit code: 1"). Only its first 64
    characters are read."""
    return _OPENS.match(text[:_HEAD].lower()) is not None


def reads_as_failure(text: str) -> bool:
    """Whether ``text``'s first characters or last lines name a failure: a traceback, a non-zero
    exit code, a word naming a failure or an error ("KeyError: 'x'", "FAILED tests/test_a.py",
    "1 failed", "3 errors"). "0 failed", "no errors", "errors: 0", "exit code 0" and names such
    as "test_errors" do not."""
    if len(text) > _HEAD + _TAIL:
        text = text[:_HEAD] + "\n" + text[-_TAIL:]
    lowered = text.lower()
    for verdict in _VERDICTS:
        if verdict in lowered:
            return True
    for marker in _EXIT_CODES:
        if marker in lowered and _exit_code(lowered, marker):
            return True
    for word in _WORDS:  # noqa: SIM110 (a loop: any() over a generator costs more than the search)
        if word in lowered and _failure_word(lowered, word):
            return True
    return False


def _exit_code(text: str, marker: str) -> bool:
    at = text.find(marker)
    while at >= 0:
        if _NONZERO.match(text, at + len(marker)):
            return True
        at = text.find(marker, at + 1)
    return False


def _failure_word(text: str, word: str) -> bool:
    at = text.find(word)
    while at >= 0:
        if _WORD_END.match(text, at + len(word)) and not _quiet(text, at, word):
            return True
        at = text.find(word, at + 1)
    return False


def _titled(text: str, at: int, word: str) -> bool:
    """Whether "errors" or "exceptions" at ``at`` titles a search hit or a heading, uncounted
    ("2. Errors - docs/errors", "## Errors"; not "# Errors: 3", "# fail 1", "# Error")."""
    end = at + len(word) + 1
    if word not in _ENDINGS or text[end - 1 : end] != "s" or _COUNTED.match(text, end):
        return False
    return _TITLE.search(text, max(at - 8, 0), at) is not None


def _quiet(text: str, at: int, word: str) -> bool:
    """Whether the word at ``at`` is part of a name ("test_errors", a path's "/errors", pytest's
    "xfailed": an expected failure), a title (``_titled``) or counted as none ("0 failed", "no
    errors")."""
    if at and (text[at - 1] in "_/" or (word not in _ENDINGS and text[at - 1].isalnum())):
        return True
    if _titled(text, at, word):
        return True
    if text[max(at - 2, 0) : at] == "0 ":
        return at < 3 or not text[at - 3].isdigit()
    return text[max(at - 3, 0) : at] == "no " and (at < 4 or not text[at - 4].isalnum())
