"""The identity of a tool call: canonical JSON and its digest.

With the ``fast`` extra (orjson), canonical JSON is written by orjson whenever its text
is certain to be the standard library's byte for byte (no ``null``, which may stand for
NaN, no negative exponent or small decimal, which the two write differently, no subclass
of a JSON type); anything else takes the pure-Python path, so both give every call the
same key. Both write an ``enum.Enum`` member as its value and a ``uuid.UUID`` as its
canonical string, as orjson does natively (except a member that is also a ``str``, ``int``,
``float`` or container whose data a custom ``__new__`` made differ from its value: the
standard library writes the data). Dates, paths, bytes, sets, dataclasses and other values JSON
has no type for take the pure-Python path (``loopfuse._json_default``).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from ._json_default import json_default
from ._shown import TOOL_SHOWN

__all__ = ["CallKey", "NoteKey", "call_digest", "canonical_json", "int63", "json_object", "strip_ignored"]

# Annotation keys that give the reason for an act (a handoff's ``reason``): alone, the act is the
# call; with a description (alone, a task's), the act and what it describes; else a thought.
_REASONS = frozenset({"explanation", "reason", "purpose"})
_ACTS = _REASONS | {"description"}


def _unserializable(value: Any) -> Any:
    """The standard library's ``default``: a value JSON has no type for, as JSON data
    (``loopfuse._json_default``); else a TypeError."""
    return json_default(value, _ENCODE)


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

    def encode(value: Any) -> bytes | None:
        try:
            out: bytes = dumps(value, option=option)
        except Exception:  # a type, key or integer orjson refuses: the pure path decides
            return None
        # null may be NaN or Infinity; Python writes 1e-07 and 2.5e-05 where orjson writes
        # 1e-7 and 0.000025 (positive exponents agree). One-byte tests first, by the byte's
        # value: ``b"-" in out`` tries the needle as an integer first and costs 8 times as much.
        if out.find(b"null") >= 0 or (45 in out and out.find(b"e-") >= 0):  # 45: "-"
            return None
        if 46 in out and out.find(b"0.0000") >= 0:  # 46: "."
            return None
        return out

    return encode


_ENCODE = _encoder()
_FAST = _fast_encoder()
_MASK63 = (1 << 63) - 1


def int63(digest: bytes) -> int:
    """A non-zero 63-bit integer from a digest's first 8 bytes (the keys the tables hold)."""
    return (int.from_bytes(digest[:8], "big") & _MASK63) or 1


def canonical_json(args: Any) -> str:
    """JSON with object keys sorted at every depth and no spaces (as JavaScript prints it)."""
    if _FAST is not None:
        raw = _FAST(args)
        if raw is not None:
            return raw.decode()
    return _ENCODE(args)


_OBJECT_START = re.compile(r"\s*\{")


def json_object(text: str) -> dict[str, Any] | None:
    """The object ``text`` writes when it is the JSON text of an object, else None."""
    if _OBJECT_START.match(text) is None:
        return None
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return value if type(value) is dict else None


def call_digest(tool: str, args: Any) -> bytes:
    """``sha256(tool + "\\n" + canonical_json(args))``; raises on unserializable arguments."""
    return _sha256(tool, canonical_json(args))


def _sha256(tool: str, text: str) -> bytes:
    return hashlib.sha256((tool + "\n" + text).encode("utf-8", "surrogatepass")).digest()


_HEADS: dict[str, bytes] = {}  # at most 4,096 names of up to TOOL_SHOWN characters: a bounded size


def _digest(tool: str, args: Any) -> tuple[bytes, str | bytes]:
    """``sha256(tool + "\\n" + canonical JSON)`` and that JSON, as orjson's UTF-8 bytes when
    it wrote it (hashed as they are: no decoding and encoding again), else as text."""
    raw = _FAST(args) if _FAST is not None else None
    if raw is None:
        text = _ENCODE(args)
        # _sha256 inlined: a Python call is about 1% of a check
        return hashlib.sha256((tool + "\n" + text).encode("utf-8", "surrogatepass")).digest(), text
    head = _HEADS.get(tool)
    if head is None:
        head = (tool + "\n").encode("utf-8", "surrogatepass")
        if len(tool) <= TOOL_SHOWN and len(_HEADS) < 4096:  # made-up long names are not kept
            _HEADS[tool] = head
    return hashlib.sha256(head + raw).digest(), raw


def _is_mapping(value: Any) -> bool:
    """``isinstance(value, Mapping)``, a dict first: the ABC check costs 0.35 us a call."""
    return type(value) is dict or isinstance(value, Mapping)


def strip_ignored(args: Any, ignore: frozenset[str]) -> Any:
    """``args`` without the top-level keys named in ``ignore`` (the same object if none is
    there, or if they are all it has: a ``think(thought=...)`` call is its thought; but none of
    them when they are only the reasons for an act, a handoff's ``reason``)."""
    if not ignore or not _is_mapping(args) or ignore.isdisjoint(args):
        return args
    kept = {k: v for k, v in args.items() if k not in ignore}
    return kept if kept or not _REASONS.issuperset(args) else {}


class CallKey:
    """The digests of one call: ``full`` over all arguments, ``key`` without ignored ones.

    ``key`` is a 63-bit integer (never 0) used by the window breaker; ``full`` is the
    loop brake's sha256. When no ignored argument is present both come from one hash.
    ``text`` is the canonical JSON the key was computed from. ``near`` is the
    near-duplicate key (volatile values masked), computed on first use by ``near_of``
    and 0 when there is none.
    """

    __slots__ = ("_near", "_text", "full", "key", "near_of", "tool")
    note: ClassVar[bool] = False  # arguments that are all annotation: a thought (``NoteKey``)

    def __init__(self, tool: str, full: bytes, key: int, text: str | bytes = "") -> None:
        self.tool = tool
        self.full = full
        self.key = key
        self._text = text
        self.near_of: Callable[[CallKey], int] | None = None
        self._near = -1

    @classmethod
    def of(cls, tool: str, args: Any, ignore: frozenset[str] = frozenset()) -> CallKey | None:
        """The call's key, or None when its arguments cannot be serialized (fail open)."""
        try:
            full, text = _digest(tool, args)
            window = full
            if ignore and (type(args) is dict or _is_mapping(args)) and not ignore.isdisjoint(args):
                kept = {k: v for k, v in args.items() if k not in ignore}
                if not kept:
                    return cls._annotated(tool, args, full, text)
                window, text = _digest(tool, kept)
        except Exception:  # unserializable, or the caller's objects raise while read
            return None
        # int63(window), inlined as the dict test above: a Python call is about 1% of a check
        return cls(tool, full, (int.from_bytes(window[:8], "big") & _MASK63) or 1, text)

    @classmethod
    def _annotated(cls, tool: str, args: Any, full: bytes, text: str | bytes) -> CallKey:
        """A call whose arguments are all ``ignore`` keys: only the reasons for an act (a
        handoff's ``reason``) leave the bare act; a thought, or a description (a task's), is
        the call, a thought being a ``NoteKey``."""
        if _REASONS.issuperset(args):
            window, text = _digest(tool, {})
            return cls(tool, full, (int.from_bytes(window[:8], "big") & _MASK63) or 1, text)
        kind = cls if _ACTS.issuperset(args) else NoteKey
        return kind(tool, full, (int.from_bytes(full[:8], "big") & _MASK63) or 1, text)

    @property
    def text(self) -> str:
        """The canonical JSON the key was computed from."""
        text = self._text
        if isinstance(text, bytes):
            text = self._text = text.decode()
        return text

    @property
    def near(self) -> int:
        if self._near < 0:
            self._near = self.near_of(self) if self.near_of is not None else 0
        return self._near

    @property
    def hash_prefix(self) -> str:
        return self.full.hex()[:12]


class NoteKey(CallKey):
    """The key of a call whose arguments are all annotation, not only the reasons for an act
    (``think(thought=...)``, not ``transfer_to_billing(reason=...)``): what it returns is the
    model's own note, never something new from the world."""

    __slots__ = ()
    note: ClassVar[bool] = True
