"""The identity of a tool call: canonical JSON and its digest."""

from __future__ import annotations

import hashlib
import json
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


_ENCODE = _encoder()
_MASK63 = (1 << 63) - 1


def canonical_json(args: Any) -> str:
    """JSON with object keys sorted at every depth and no spaces (as JavaScript prints it)."""
    return _ENCODE(args)


def call_digest(tool: str, args: Any) -> bytes:
    """``sha256(tool + "\\n" + canonical_json(args))``; raises on unserializable arguments."""
    return _sha256(tool, _ENCODE(args))


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
            text = _ENCODE(args)
            full = _sha256(tool, text)
            stripped = strip_ignored(args, ignore)
            window = full
            if stripped is not args:
                text = _ENCODE(stripped)
                window = _sha256(tool, text)
        except Exception:  # unserializable, or the caller's objects raise while read
            return None
        return cls(tool, full, _int_key(window), text)

    @property
    def near(self) -> int:
        if self._near < 0:
            self._near = self.near_of(self) if self.near_of is not None else 0
        return self._near

    @property
    def hash_prefix(self) -> str:
        return self.full.hex()[:12]


def _int_key(digest: bytes) -> int:
    return (int.from_bytes(digest[:8], "big") & _MASK63) or 1
