"""Masking volatile values: what changes between two calls that mean the same thing.

Used for the near-duplicate identity of a call (numbers, ids, timestamps, temporary files'
names, cursors in its arguments) and for result digests (ids, timestamps, temporary files' names,
a browser snapshot's element refs and durations only: a changed number in a result, "3 failed"
then "2 failed", is progress; "in 0.42s" then "in 0.45s" is not).
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Collection
from typing import Any

from ._calls import canonical_json, int63

__all__ = [
    "ERROR_MASKS",
    "MASKS",
    "RESULT_MASKS",
    "int_digest",
    "pair_key",
    "result_digest",
    "result_digests",
    "result_text",
    "text_digests",
]

_MASK63 = (1 << 63) - 1
_RESULT_EDGE = 4_096

# Order matters: the specific shapes are masked before the plain numbers inside them.
# Every shape but a plain number starts at a word boundary and holds a digit (checked
# once per word by a possessive scan to its first digit, so a word without one costs a
# single pass and no backtracking).
_SHAPES: dict[str, str] = {
    "uuids": r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b",
    # ISO 8601 (also compact: "20241203T075045Z"), a time of day; a fraction after "." or ","
    # (Python's logging and log4j write "07:50:45,123"); a Unix time from 2001 to 2033 in
    # seconds, ms, us or ns ("1733212245", "1733212245.123456", "1733212245123"), not the
    # digits of a fraction ("0.1733212245").
    "timestamps": (
        r"\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?\b"
        r"|\d{8}T\d{6}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?\b"
        r"|\d{2}:\d{2}:\d{2}(?:[.,]\d+)?\b"
        r"|(?<!\.)1\d{9}(?:\d{3}){0,3}(?:\.\d+)?\b"
        # a clock's time ("12:04 PM"), a time ago ("5 min ago", "3 hours ago"), as pages show them
        r"|\d{1,2}:\d{2} ?[AaPp][Mm]\b"
        r"|\d++ ?(?=[smhdw])(?:s|secs?|seconds?|m|mins?|minutes?|h|hrs?|hours?|d|days?|w|weeks?|mo|months?) ago\b"
    ),
    # The random names of Python's tempfile ("/tmp/tmpk3j_x9a2") and of mktemp
    # ("/tmp/tmp.Xa81bQz0Pc"), with a digit among their random characters (a name without one,
    # as "tmp_outputs", may be a word).
    "temp_names": r"tmp(?:(?=[a-z_]{0,7}\d)[a-z0-9_]{8}|\.(?=[A-Za-z]{0,9}\d)[A-Za-z0-9]{10})\b",
    "hex_ids": r"(?:0x)?(?=[0-9a-fA-F]*\d)(?=[0-9a-fA-F]*[a-fA-F])[0-9a-fA-F]{8,}\b",
    "cursors": r"(?=[A-Za-z0-9_\-]*\d)(?=[A-Za-z0-9_\-]*[A-Za-z])[A-Za-z0-9_\-]{24,}={0,2}",
    # "0.42s", "12 ms", "3 seconds", "0m0.523s" (as `time` prints it): how long a call took.
    "durations": r"\d+(?:\.\d+)?(?:m\d+(?:\.\d+)?)? ?(?:[mnu\u00b5]?s|secs?|seconds?)\b",
}
_NUMBER = r"-?\d+(?:\.\d+)?"
# How long the call itself took, under a JSON (or Python) key naming it, as Codex's shell answers
# ("duration_seconds": 1.3) and Elasticsearch's ("took": 5): the key and number masked together.
# Not a latency or response time, which a tool may report as the data asked for.
_DURATION_KEY = r"(?i:duration|elapsed(?:_?time)?|took|wall_?time|time_?taken|exec(?:ution)?_?time)"
_DURATION_UNIT = r"(?i:_?(?:s|ms|us|ns|secs?|seconds|millis(?:econds)?|micros(?:econds)?|mins?|minutes))?"
_KEYED_DURATION = r"[\"']" + _DURATION_KEY + _DURATION_UNIT + r"[\"'] ?: ?\d+(?:\.\d+)?"
_KEYED_DURATION_START = re.compile(("[\"']" + _DURATION_KEY).encode())
MASKS: tuple[str, ...] = (*_SHAPES, "numbers", "whitespace")
RESULT_MASKS: tuple[str, ...] = ("uuids", "timestamps", "temp_names", "hex_ids", "durations")
ERROR_MASKS: tuple[str, ...] = ("uuids", "timestamps", "temp_names", "hex_ids", "durations", "numbers")


_DIGIT = re.compile(r"\d", re.ASCII)
# The same matches as _NUMBER, in a form whose first character is a class, so the regex
# engine skips straight to the next digit or minus sign (about twice as fast on prose).
_NUMBER_FAST = r"[-\d](?<=\d|-(?=\d))\d*(?:\.\d+)?"
# Every shape holds a run of hex digits (a uuid's first 8, a hex id, "dddd-dd-dd",
# "dd:dd:dd"), "tmp" (a temporary file's name) or, a cursor, 24 word characters: in ASCII
# text with none of these, no shape can match and only the numbers need masking.
# The bytes of UTF-8 text past ASCII: no class's character, each read as "~" by the pre-checks.
_HIGH = bytes(range(128, 256))
_HEX = bytes.maketrans(b"0123456789abcdefABCDEF" + _HIGH, b"x" * 22 + b"~" * 128)
_WORD = bytes.maketrans(
    b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_-" + _HIGH, b"w" * 64 + b"~" * 128
)
_CURSOR_RUN = "w" * 24
_DIGITS_TO_NUL = bytes.maketrans(b"0123456789", b"\0" * 10)
_HEX_SHAPES = frozenset({"uuids", "timestamps", "hex_ids"})
# Digits to \x01, the letters a unit may start with (m, n, u, and the micro sign, UTF-8 C2 B5,
# its first byte dropped) to \x02, spaces dropped: a duration needs "\x01s" or "\x01\x02s" in
# the translated text.
_UNITS = bytes.maketrans(
    b"0123456789mnu\xb5" + _HIGH.replace(b"\xb5", b""), b"\x01" * 10 + b"\x02" * 4 + b"~" * 127
)
_UNITS_DROPPED = b" \xc2"
_SHAPE_NAMES = frozenset(_SHAPES)


def mask_text(text: str, masks: Collection[str]) -> str:
    """``text`` with every value of the named classes replaced by a placeholder."""
    plan = _plan(masks if isinstance(masks, frozenset) else frozenset(masks))
    if plan.pattern is not None:
        text = _values_masked(text, plan, plan.pattern)
    if plan.whitespace:
        text = " ".join(text.split())
    return text


def _values_masked(text: str, plan: _Plan, pattern: re.Pattern[str]) -> str:
    """``text`` with the values of ``plan``'s classes masked. Every class needs a digit, so
    text without one is kept; text that cannot hold a shape (the usual case) has its numbers
    masked by byte operations on its UTF-8, the same text the pattern writes (its classes are
    ASCII's: a digit is 0 to 9), in a third of the time, a quarter for text past ASCII."""
    if "\0" in text:
        return pattern.sub("#", text) if _DIGIT.search(text) is not None else text
    raw = _utf8(text)
    if plan.reduced is not pattern and _may_hold_shape(raw, plan):
        return pattern.sub("#", text)
    if not plan.numbers:
        return text
    marked = raw.translate(_DIGITS_TO_NUL)
    return _numbers_masked(marked) if 0 in marked else text  # 0: a digit's NUL, tested by value


def _numbers_masked(marked: bytes) -> str:
    """What ``_NUMBER`` masking writes, from the text with each digit turned into NUL: each
    run of digits one NUL (pairs merged until none is left: a pass per doubling of the
    longest run, faster than splitting at every digit), then a fraction and a leading minus
    sign joined to it."""
    while True:
        body = marked.replace(b"\0\0", b"\0")
        if len(body) == len(marked):
            break
        marked = body
    if 45 in body or 46 in body:  # "-", ".": by the byte's value (see _may_hold_shape)
        body = body.replace(b"\0.\0", b"\0").replace(b"-\0", b"\0")
    return _decoded(body.replace(b"\0", b"#"))


def _utf8(text: str) -> bytes:
    """``text``'s UTF-8 (a lone surrogate, as in a name made of undecodable bytes, kept)."""
    return text.encode() if text.isascii() else text.encode("utf-8", "surrogatepass")


def _decoded(raw: bytes) -> str:
    """The text ``_utf8`` made ``raw`` of."""
    try:
        return raw.decode()
    except UnicodeDecodeError:
        return raw.decode("utf-8", "surrogatepass")


class _Plan:
    """What masking one set of value classes takes: its pattern, the pattern without the
    shapes (for text that cannot hold one), and which pre-checks tell the two apart."""

    __slots__ = ("cursors", "durations", "hexes", "numbers", "pattern", "reduced", "temps", "whitespace")

    def __init__(self, masks: frozenset[str]) -> None:
        self.pattern, self.reduced = _combined(masks), _combined(masks - _SHAPE_NAMES)
        self.hexes, self.cursors = not masks.isdisjoint(_HEX_SHAPES), "cursors" in masks
        self.durations, self.temps = "durations" in masks, "temp_names" in masks
        self.whitespace, self.numbers = "whitespace" in masks, "numbers" in masks


@functools.cache
def _plan(masks: frozenset[str]) -> _Plan:
    return _Plan(masks)


def _may_hold_shape(raw: bytes, plan: _Plan) -> bool:
    """Whether UTF-8 ``raw`` has a run of characters one of the shapes of ``plan`` needs (the
    bytes past ASCII read as "~", which no shape holds).

    The searches run on ``str``: ``needle in bytes`` costs about 0.4 us whatever the length
    (CPython tries the needle as an integer first), ``in`` on an ASCII ``str`` about 0.07."""
    if plan.hexes:
        hexed = raw.translate(_HEX).decode()
        if "xxxxxxxx" in hexed or "xx:xx:xx" in hexed or "xxxx-xx-xx" in hexed:
            return True
        if "x:xx" in hexed and ("M" in hexed or "m" in hexed):  # a clock's "12:04 PM"
            return True
        if " xgo" in hexed:  # " ago", its "a" a hex digit
            return True
    if plan.durations and _may_hold_duration(raw):
        return True
    if plan.temps and raw.find(b"tmp") >= 0:
        return True
    return plan.cursors and _CURSOR_RUN in raw.translate(_WORD).decode()


def _may_hold_duration(raw: bytes) -> bool:
    """Whether UTF-8 ``raw`` has a digit followed by a unit's "s" (a space or m, n, u, µ
    between), or a key naming a duration."""
    units = raw.translate(_UNITS, _UNITS_DROPPED).decode()
    if "\x01s" in units or "\x01\x02s" in units:
        return True
    keyed = '":\x01' in units or "':\x01" in units  # a number right after a key (spaces dropped)
    return keyed and _KEYED_DURATION_START.search(raw) is not None


@functools.cache
def _combined(masks: frozenset[str]) -> re.Pattern[str] | None:
    """One pattern for the value classes in ``masks``: a single pass over the text, the
    more specific shapes tried first at each position."""
    shapes = [_SHAPES[name] for name in _SHAPES if name in masks]
    branches = [r"\b(?=[A-Za-z_\-:.]*+\d)(?:" + "|".join(shapes) + ")"] if shapes else []
    if "durations" in masks:
        branches.append(_KEYED_DURATION)
    if "numbers" in masks:
        branches.append(_NUMBER if shapes else _NUMBER_FAST)
    return re.compile("|".join(branches), re.ASCII) if branches else None


def int_digest(text: str) -> int:
    """A non-zero 63-bit integer digest of ``text`` (BLAKE2b of 8 bytes: here, unlike the
    call's own sha256, nothing outside the guard sees it, and it costs half as much)."""
    return int63(hashlib.blake2b(_utf8(text), digest_size=8).digest())


def result_digest(result: Any, masks: frozenset[str] = frozenset(RESULT_MASKS)) -> int:
    """The digest of a tool's result with ``masks`` masked (by default ids, timestamps and
    durations, these in its last 512 characters); the result itself is not
    kept. Raises on a result that cannot be serialized."""
    text = _masked_result(_refs_masked(result_text(result)), masks - _DURATIONS)
    return int_digest(_durations_masked(text) if "durations" in masks else text)


def result_digests(result: Any, error: bool) -> tuple[int, int]:
    """The result's digest and, for an error, its error digest (numbers masked too), from
    one masking pass over the text: ``(digest, 0)`` when not an error."""
    return text_digests(result_text(result), error)


def text_digests(text: str, error: bool) -> tuple[int, int]:
    """``result_digests`` of a result already written as text (``result_text``)."""
    text = _durations_masked(_masked_result(_refs_masked(text), _RESULT_MASKS))
    if not error:
        return int_digest(text), 0
    return int_digest(text), _error_digest(text)


_DIGITS = b"0123456789#"  # and the "#" a number shaped like a Unix time was masked to


# What tells one attempt's error from the next and nothing about the failure: a request or
# trace id after a prefix ("req_011CSHz9oq8X8uTe", "x-github-request-id: CE8A:1F3B:5A1C:9B2D"),
# a build's random id. A run of letters and digits with a digit and 10 letters (6 in a run of
# hex digits), or 4 or more hex groups joined by colons (some already masked as hex ids).
# Counted in letters, so how many digits a number has never changes what is masked.
_RANDOM_TOKEN = re.compile(
    r"(?<![A-Za-z0-9])(?=[A-Za-z]*+\d)"
    r"(?:(?=(?:\d*+[a-f]){6})[0-9a-f]++|(?=(?:\d*+[A-F]){6})[0-9A-F]++|(?=(?:\d*+[A-Za-z]){10})[A-Za-z0-9]++)"
    r"(?![A-Za-z0-9])"
    r"|(?<![0-9A-Fa-f:#])[0-9A-Fa-f#]++(?::[0-9A-Fa-f#]++){3,}+(?![0-9A-Fa-f:#])",
    re.ASCII,
)
# Where an error names its request id: an API's answer is short, and a longer text (a
# traceback, a response's headers) ends with it. Only there, at a bounded cost.
_TOKEN_EDGE = 256
_CLASSES = bytes.maketrans(
    b"#0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ", b"a" + b"1" * 10 + b"a" * 52
)
_TOKEN_SIGNS = (b"a1", b"1a", b"a:a", b"a:1", b"1:a", b"1:1")


def _tokens_masked(text: str) -> str:
    """``text`` with the random tokens in its first and last 256 characters masked (an API's
    short answer, a traceback's last line, a header line's request id)."""
    if len(text) <= 2 * _TOKEN_EDGE:
        return _tokens_in(text)
    middle = text[_TOKEN_EDGE:-_TOKEN_EDGE]
    return _tokens_in(text[:_TOKEN_EDGE]) + middle + _tokens_in(text[-_TOKEN_EDGE:])


def _tokens_in(text: str) -> str:
    """Every token holds a digit next to a letter, or a colon between two hex groups: ASCII
    text with neither, found by byte operations, is kept without a pass of the pattern."""
    if text.isascii():
        classes = text.encode().translate(_CLASSES)
        if not any(sign in classes for sign in _TOKEN_SIGNS):
            return text
    return _RANDOM_TOKEN.sub("#", text)


def _error_digest(text: str) -> int:
    """The digest of an error with its numbers, and the random tokens near its end, masked.
    ASCII text (nearly every error) has its digits dropped, one pass in C whatever the length:
    "3 failed" and "12 failed" read alike, as with the numbers mask, at a sixth of its cost on
    a 4 KB error full of line numbers."""
    text = _tokens_masked(text)
    if not text.isascii():
        return int_digest(_masked_result(text, _NUMBER_MASK))
    return int63(hashlib.blake2b(text.encode().translate(None, _DIGITS), digest_size=8).digest())


# Where a tool says how long the call took ("3 failed in 0.42s", "(took 0.42s)", `time`'s
# "real 0m0.523s"): a result's durations are masked there only, at a cost that does not
# grow with the result (a scan of 4 KiB for them costs a sixth of the result's digest).
_DURATION_TAIL = 512
_DURATIONS = frozenset({"durations"})
_RESULT_MASKS = frozenset(RESULT_MASKS) - _DURATIONS
_NUMBER_MASK = frozenset({"numbers"})
_DURATION_PATTERN = _combined(_DURATIONS) or re.compile("(?!)")  # (never None: durations is a class)


def _durations_masked(text: str) -> str:
    """``text`` with the durations in its last 512 characters masked (what ``mask_text``
    with ``durations`` writes there, without its plan: this runs once per result)."""
    tail = text[-_DURATION_TAIL:] if len(text) > _DURATION_TAIL else text
    if not _may_hold_duration(_utf8(tail)):
        return text
    masked = _DURATION_PATTERN.sub("#", tail)
    return masked if tail is text else text[: -len(tail)] + masked


# A browser snapshot's element handles, as Playwright's MCP server writes them ("[ref=e12]", and
# "[ref=s3e12]" in older versions): a new snapshot of the same page may number them anew.
_ELEMENT_REF = re.compile(r"\[ref=[A-Za-z]+\d+(?:[A-Za-z]+\d+)*\]", re.ASCII)


def _refs_masked(text: str) -> str:
    """``text`` with every element ref masked, through the whole text (a snapshot holds them
    everywhere). Text without a "[" costs one ``memchr``; the pattern's own search (its literal
    prefix) is faster than ``"[ref=" in text``, which costs 0.45 ns a character."""
    return _ELEMENT_REF.sub("[ref=#]", text) if "[" in text else text


def result_text(result: Any) -> str:
    """The text a result's digests are made of: a string as it is (a subclass's own methods
    never run), bytes as the text they encode (UTF-8, as a process's output is read), anything
    else as canonical JSON."""
    if type(result) is str:
        return result
    if isinstance(result, str):
        return str.__str__(result)
    if isinstance(result, bytes):
        return bytes.decode(result, "utf-8", "replace")
    if isinstance(result, bytearray):
        return bytearray.decode(result, "utf-8", "replace")
    return canonical_json(result)


def _masked_result(text: str, masks: frozenset[str]) -> str:
    """``text`` masked; past 8 KiB only its first and last 4 KiB (a bounded cost per result)."""
    if len(text) > 2 * _RESULT_EDGE:
        head, tail = text[:_RESULT_EDGE], text[-_RESULT_EDGE:]
        return mask_text(head, masks) + text[_RESULT_EDGE:-_RESULT_EDGE] + mask_text(tail, masks)
    return mask_text(text, masks)


def pair_key(key: int, result: int) -> int:
    """One 63-bit key for a call key and a result digest."""
    return (((key * 0x9E3779B97F4A7C15) ^ result) & _MASK63) or 1
