"""The identity of a tool call: canonical JSON and its digest.

With the ``fast`` extra (orjson), canonical JSON is written by orjson whenever its text
is certain to be the standard library's byte for byte (no ``null``, which may stand for
NaN, no float that Python writes with an exponent, no subclass of a JSON type); anything
else takes the pure-Python path, so both give every call the same key.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["CallKey", "call_digest", "canonical_json", "strip_ignored"]


def _unserializable(value: Any) -> Any:
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def _encoder() -> Callable[[Any], str]:
    """The C encoder called directly (no per-call setup); circular input raises RecursionError."""
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:  # pragma: no cover - interpreters without the C accelerator
        return json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode
    encode = make(None, _unserializable, json.encoder.encode_basestring, None, ":", ",", True, False, True)
    return lambda value: "".join(encode(value, 0))


def _fast_encoder() -> Callable[[Any], bytes | None] | None:
    """orjson's canonical JSON, or None where the standard library might write it differently."""
    try:
        import orjson
    except ImportError:
        return None
    dumps = orjson.dumps
    option = (
        orjson.OPT_SORT_KEYS
        | orjson.OPT_PASSTHROUGH_DATACLASS
        | orjson.OPT_PASSTHROUGH_DATETIME
        | orjson.OPT_PASSTHROUGH_SUBCLASS
    )
    unsure = re.compile(rb"null|\d[eE]|0\.0000").search

    def encode(value: Any) -> bytes | None:
        try:
            out: bytes = dumps(value, option=option)
        except Exception:  # a type, key or integer orjson refuses: the pure path decides
            return None
        return None if unsure(out) else out

    return encode


_ENCODE = _encoder()
_FAST = _fast_encoder()
_MASK63 = (1 << 63) - 1


def canonical_json(args: Any) -> str:
    """JSON with object keys sorted at every depth and no spaces (as JavaScript prints it)."""
    if _FAST is not None:
        raw = _FAST(args)
        if raw is not None:
            return raw.decode()
    return _ENCODE(args)


def call_digest(tool: str, args: Any) -> bytes:
    """``sha256(tool + "\\n" + canonical_json(args))``; raises on unserializable arguments."""
    return _sha256(tool, canonical_json(args))


def _sha256(tool: str, text: str) -> bytes:
    return hashlib.sha256((tool + "\n" + text).encode("utf-8", "surrogatepass")).digest()


def strip_ignored(args: Any, ignore: frozenset[str]) -> Any:
    """``args`` without the top-level keys named in ``ignore`` (the same object if none is there)."""
    if not ignore or not isinstance(args, Mapping) or ignore.isdisjoint(args):
        return args
    return {k: v for k, v in args.items() if k not in ignore}


class CallKey:
    """The digests of one call: ``full`` over all arguments, ``key`` without ignored ones.

    ``key`` is a 63-bit integer (never 0) used by the window breaker; ``full`` is the
    loop brake's sha256. When no ignored argument is present both come from one hash.
    ``text`` is the canonical JSON the key was computed from. ``near`` is the
    near-duplicate key (volatile values masked), computed on first use by ``near_of``
    and 0 when there is none.
    """

    __slots__ = ("_near", "full", "key", "near_of", "text", "tool")

    def __init__(self, tool: str, full: bytes, key: int, text: str = "") -> None:
        self.tool = tool
        self.full = full
        self.key = key
        self.text = text
        self.near_of: Callable[[CallKey], int] | None = None
        self._near = -1

    @classmethod
    def of(cls, tool: str, args: Any, ignore: frozenset[str] = frozenset()) -> CallKey | None:
        """The call's key, or None when its arguments cannot be serialized (fail open)."""
        try:
            raw = _FAST(args) if _FAST is not None else None
            text = _ENCODE(args) if raw is None else raw.decode()
            full = _sha256(tool, text)
            window = full
            if ignore and isinstance(args, Mapping) and not ignore.isdisjoint(args):
                text = canonical_json({k: v for k, v in args.items() if k not in ignore})
                window = _sha256(tool, text)
        except Exception:  # unserializable, or the caller's objects raise while read
            return None
        return cls(tool, full, (int.from_bytes(window[:8], "big") & _MASK63) or 1, text)

    @property
    def near(self) -> int:
        if self._near < 0:
            self._near = self.near_of(self) if self.near_of is not None else 0
        return self._near

    @property
    def hash_prefix(self) -> str:
        return self.full.hex()[:12]
