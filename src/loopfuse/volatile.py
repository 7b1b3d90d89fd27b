"""Masking volatile values: what changes between two calls that mean the same thing.

Used for the near-duplicate identity of a call (numbers, ids, timestamps, cursors in its
arguments) and for result digests (ids and timestamps only: a changed number in a result,
"3 failed" then "2 failed", is progress).
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Collection, Mapping
from typing import Any

from .calls import canonical_json

__all__ = ["ERROR_MASKS", "MASKS", "RESULT_MASKS", "int_digest", "mask_value", "pair_key", "result_digest"]

_MASK63 = (1 << 63) - 1
_RESULT_EDGE = 4_096

# Order matters: the specific shapes are masked before the plain numbers inside them.
_PATTERNS: dict[str, re.Pattern[str]] = {
    "uuids": re.compile(r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b"),
    "timestamps": re.compile(
        r"\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?\b"
        r"|\b\d{2}:\d{2}:\d{2}(?:\.\d+)?\b"
    ),
    "hex_ids": re.compile(r"\b(?:0x)?(?=[0-9a-fA-F]*\d)(?=[0-9a-fA-F]*[a-fA-F])[0-9a-fA-F]{8,}\b"),
    "cursors": re.compile(r"\b(?=[A-Za-z0-9_\-]*\d)(?=[A-Za-z0-9_\-]*[A-Za-z])[A-Za-z0-9_\-]{24,}={0,2}"),
    "numbers": re.compile(r"-?\d+(?:\.\d+)?"),
    "whitespace": re.compile(r"\s+"),
}
_REPLACEMENT = {"whitespace": " "}
MASKS: tuple[str, ...] = tuple(_PATTERNS)
RESULT_MASKS: tuple[str, ...] = ("uuids", "timestamps", "hex_ids")
ERROR_MASKS: tuple[str, ...] = ("uuids", "timestamps", "hex_ids", "numbers")


_DIGIT = re.compile(r"\d")


def mask_text(text: str, masks: Collection[str]) -> str:
    """``text`` with every value of the named classes replaced by a placeholder.

    Every value class needs a digit, so text without one skips straight to whitespace.
    """
    if _DIGIT.search(text) is not None:
        pattern = _combined(frozenset(masks))
        if pattern is not None:
            text = pattern.sub("#", text)
    if "whitespace" in masks:
        text = _PATTERNS["whitespace"].sub(" ", text).strip()
    return text


@functools.cache
def _combined(masks: frozenset[str]) -> re.Pattern[str] | None:
    """One pattern for the value classes in ``masks``: a single pass over the text, the
    more specific shapes tried first at each position."""
    names = [name for name in _PATTERNS if name in masks and name not in _REPLACEMENT]
    if not names:
        return None
    return re.compile("|".join(f"(?:{_PATTERNS[name].pattern})" for name in names))


def mask_value(value: Any, masks: Collection[str], volatile_keys: Collection[str] = ()) -> Any:
    """``value`` with strings masked, numbers replaced (if ``numbers`` is masked) and the
    values of ``volatile_keys`` (at any depth) replaced by a placeholder."""
    if isinstance(value, str):
        return mask_text(value, masks)
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int | float):
        return "#" if "numbers" in masks else value
    if isinstance(value, Mapping):
        return {
            str(k): "#" if k in volatile_keys else mask_value(v, masks, volatile_keys)
            for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return [mask_value(v, masks, volatile_keys) for v in value]
    return value


def int_digest(text: str) -> int:
    """A non-zero 63-bit integer digest of ``text`` (sha256)."""
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()
    return (int.from_bytes(digest[:8], "big") & _MASK63) or 1


def result_digest(result: Any, masks: frozenset[str] = frozenset(RESULT_MASKS)) -> int:
    """The digest of a tool's result with ``masks`` masked (by default ids and timestamps);
    the result itself is not kept. Raises on a result that cannot be serialized."""
    text = result if isinstance(result, str) else canonical_json(result)
    if len(text) > 2 * _RESULT_EDGE:  # mask the ends only: a bounded cost per result
        head, tail = text[:_RESULT_EDGE], text[-_RESULT_EDGE:]
        text = mask_text(head, masks) + text[_RESULT_EDGE:-_RESULT_EDGE] + mask_text(tail, masks)
        return int_digest(text)
    return int_digest(mask_text(text, masks))


def pair_key(key: int, result: int) -> int:
    """One 63-bit key for a call key and a result digest."""
    return (((key * 0x9E3779B97F4A7C15) ^ result) & _MASK63) or 1
