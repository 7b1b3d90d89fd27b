"""The Lua scripts of the Redis store, bound to a guard's breakers, and the arguments they take.

Both scripts first apply the results the store held back for the agent (``lua/pending.lua``): a
check carries them after its own arguments, a flush carries nothing else.

Each script is the settings line, ``lua/common.lua``, the fragment of each of the guard's
breakers (``lua/breakers/<kind>.lua``), ``lua/observe.lua``, ``lua/pending.lua`` and the driver
(``lua/decide.lua`` or ``lua/flush.lua``). The same parts also make one Redis Function library
(``ScriptSet.library``), whose two functions run only the per-call parts (``lua/pending.lua`` and
a driver): the rest ran once, when Redis loaded it. A fragment's header names the state hash
fields it reads (``-- fields:``), all read by one ``HMGET`` per run, and what its unit does
besides checking (``-- ops:``); a breaker outside the package names its fragment in ``lua_file``.

Lua numbers in Redis are doubles, so everything that needs 63-bit arithmetic (pair keys of a
call or near-duplicate key and its result, digests, near-duplicate keys) is computed here and
sent as bytes; the scripts only compare.
"""

from __future__ import annotations

import hashlib
import itertools
import re
import struct
from importlib import resources
from pathlib import Path
from typing import Any, NamedTuple

from .._calls import CallKey
from .._process import process_number
from .._state import ToolResult
from .._volatile import pair_key
from ..breakers import Breaker, NearDuplicateBreaker, SameErrorBreaker, StallBreaker, WindowBreaker
from ..breakers._rerun import is_edit, is_note, rerun_key
from ..breakers._scope import error_scope
from ..breakers.custom import own_breaker
from ..breakers.registry import REGISTRY
from ..errors import ConfigError
from .base import StoreSpec

__all__ = [
    "INVALID_SCRIPT",
    "SUPPORTED_KINDS",
    "ScriptSet",
    "fragment_fields",
    "fragment_ops",
    "fragment_source",
    "supported_breakers",
]

SUPPORTED_KINDS = tuple(kind for kind, cls in REGISTRY.items() if cls.lua == "fragment")
_DRIVER_FIELDS = ("calls", "denials", "puts", "aw", "pend", "lr", "ld", "tid", "trep")  # the drivers' own
_FIELDS_LINE = re.compile(r"^-- fields:(.*)$", re.MULTILINE)
_OPS_LINE = re.compile(r"^-- ops:(.*)$", re.MULTILINE)
_OPS = ("check", "refused", "record", "observe", "touch")
_FIELD_NAME = re.compile(r"[A-Za-z0-9_:]+")
_FIELD_REF = re.compile(r"\bF(?:\.([A-Za-z_]\w*)|\['([^']+)'\])")
_FIELD_PUT = re.compile(r"\bput\('([^']+)'")
_NONE = bytes(8)  # no near-duplicate key (lua/common.lua NONE)
_UNSENT = b""  # a near-duplicate key not computed (the guard has seen no result yet)
_TRIP_ID = struct.Struct(">QQ")  # a round trip's id: this process's random number, a count
_TRIPS = itertools.count()
_TOOLS_KEPT = 1024
# A result's fixed fields as lua/observe.lua reads them: call key, result digest, their pair key,
# '0' for a failure ('2' a success, '1' neither said), error digest, near key, its pair key, the re-run keys of the two
# pair keys, '1' for a call of an edit tool ('2' a note, else '0'), the full digest's length.
_RESULT_HEAD = struct.Struct(">QQQcQQQQQcB")


class _Tool(NamedTuple):
    """A tool's part of a check's arguments: the scripts' "tool" (``ScriptSet._error_scope``),
    whether it is a batch tool, its window limits without and with a known result, and its
    near-duplicate limit."""

    scope: bytes
    batch: bool
    plain: int
    with_result: int
    near_limit: int


def _source(name: str) -> str:
    return resources.files(__package__).joinpath(f"lua/{name}.lua").read_text(encoding="utf-8")


_COMMON, _DECIDE, _OBSERVE = _source("common"), _source("decide"), _source("observe")
_PENDING, _FLUSH = _source("pending"), _source("flush")
INVALID_SCRIPT = _source("invalid")


def supported_breakers(spec: StoreSpec) -> tuple[Breaker, ...]:
    """``spec.breakers``, all of which the Redis store evaluates: the registry's own, and your
    own that bring their Lua fragment (``lua_file``); ``ConfigError`` names any other."""
    breakers = tuple(own_breaker(b) for b in (*spec.breakers, *spec.warners))
    unsupported = sorted({b.kind for b in breakers if not (_registered(b) or _own_fragment(b))})
    if unsupported:
        raise ConfigError(
            f"the Redis store cannot evaluate the breaker(s) {', '.join(unsupported)}: it implements "
            f"{', '.join(SUPPORTED_KINDS)} and breakers whose class has lua = 'fragment', a lua_file, "
            "lua_settings() and script_rule() (docs/breakers.md, 'Adding a breaker'); "
            "disable them or use store='memory://'"
        )
    _one_class_per_kind(breakers)
    for breaker in breakers:
        _check_settings(breaker)
    return breakers[: len(spec.breakers)]


def _registered(breaker: Breaker) -> bool:
    """Whether ``breaker`` is the registry's own breaker of its kind, which the scripts implement."""
    cls = REGISTRY.get(breaker.kind)
    return cls is not None and cls.lua == "fragment" and type(breaker) is cls


def _own_fragment(breaker: Breaker) -> bool:
    """Whether ``breaker`` (your own) brings what the scripts need to run it."""
    cls = type(breaker)
    try:
        needs = (getattr(cls, "lua", None) == "fragment", getattr(cls, "lua_file", None) is not None)
        return all(needs) and all(
            callable(getattr(breaker, m, None)) for m in ("lua_settings", "script_rule")
        )
    except Exception:  # attributes that raise: not a breaker the scripts can run
        return False


def _check_settings(breaker: Any) -> None:
    """``ConfigError`` unless ``breaker.lua_settings()`` gives integers (the fragment's b[2]...)."""
    try:
        settings = tuple(breaker.lua_settings())
    except Exception as exc:
        settings = (exc,)
    if not all(type(value) is int for value in settings):
        raise ConfigError(
            f"{type(breaker).__name__}.lua_settings() = {settings!r} is not allowed: "
            "expected a tuple of integers (the fragment reads them as b[2], b[3], ...)"
        )


def _one_class_per_kind(breakers: tuple[Breaker, ...]) -> None:
    """A kind is one Lua unit: ``ConfigError`` when two classes claim one."""
    classes: dict[str, type[Any]] = dict(REGISTRY)
    for breaker in breakers:
        known = classes.setdefault(breaker.kind, type(breaker))
        if known is not type(breaker):
            raise ConfigError(
                f"the breaker kind {breaker.kind!r} is {known.__name__}'s on the Redis store, "
                f"not {type(breaker).__name__}'s: give your breaker a kind of its own"
            )


class ScriptSet:
    """The sources of both scripts for one guard, and the arguments of each round trip."""

    def __init__(
        self, breakers: tuple[Breaker, ...], window: int, ttl_ms: int, warners: tuple[Breaker, ...] = ()
    ) -> None:
        try:
            self.decide, self.flush, self.library, self.functions = _assemble(
                breakers, warners, window, ttl_ms
            )
        except (OSError, TypeError, ValueError) as exc:  # only your own fragments can fail
            files = sorted({str(getattr(type(b), "lua_file", None)) for b in breakers if not _registered(b)})
            raise ConfigError(
                f"the Redis store cannot load the Lua fragment(s) {', '.join(files)}: {exc}"
            ) from exc
        windows = [b for b in breakers if isinstance(b, WindowBreaker)]
        self._window = windows[0] if windows else None
        nears = [b for b in breakers if isinstance(b, NearDuplicateBreaker)]
        self._near = nears[0] if nears else None
        # Whether every check needs the near-duplicate key, results or not.
        self.near_from_start = self._near is not None and not self._near.only_with_results
        # The batch tools (`[tools.<name>] batch`), which same_error and stall both keep.
        self._edits = frozenset().union(*(getattr(b, "edit_tools", ()) for b in breakers))
        self._batch = frozenset().union(
            *(b.batch_tools for b in breakers if isinstance(b, SameErrorBreaker | StallBreaker))
        )
        self._by_kind: dict[str, Any] = {b.kind: b for b in breakers}
        self._tools: dict[str, _Tool] = {}

    def check_args(self, call: CallKey, near: bool) -> list[Any]:
        """The check's arguments; with ``near`` false the near-duplicate key is not computed
        (about 9 us of masking) and the script asks for it if the agent has results."""
        tool = self._tools.get(call.tool) or self._tool(call.tool)
        key = call.key.to_bytes(8, "big")
        scope = tool.scope + key if tool.batch else self._program_scope(call, tool)
        note = b"1" if is_note(call) else b"0"
        if self._near is None:
            return [key, call.full, scope, tool.plain, tool.with_result, _NONE, 0, note]
        near_key = call.near.to_bytes(8, "big") if near else _UNSENT
        return [key, call.full, scope, tool.plain, tool.with_result, near_key, tool.near_limit, note]

    def _tool(self, name: str) -> _Tool:
        """What the scripts get for a call of tool ``name`` (kept for the next ``_TOOLS_KEPT`` tools)."""
        if len(self._tools) >= _TOOLS_KEPT:
            self._tools.clear()
        plain, with_result = self._window_limits(name)
        near = self._near.tool_limits.get(name, self._near.limit) if self._near is not None else 0
        batch = name in self._batch
        scope = _tool_id(name) + b"\n" if batch else _tool_id(name)
        tool = self._tools[name] = _Tool(scope, batch, plain, with_result, near)
        return tool

    def result_arg(self, call: CallKey, result: ToolResult) -> bytes:
        """One result as one argument (its fields: ``lua/observe.lua``), sent with the agent's
        next round trip."""
        near = call.near if self._near is not None else 0
        digest = result.digest
        near_pair = pair_key(near, digest) if near else 0
        failed = b"0" if result.ok is False else b"2" if result.ok is True else b"1"
        pair = pair_key(call.key, digest)
        head = _RESULT_HEAD.pack(
            call.key,
            digest,
            pair,
            failed,
            result.error,
            near,
            near_pair,
            rerun_key(pair),
            rerun_key(near_pair) if near else 0,
            b"1" if is_edit(call, self._edits) else b"2" if is_note(call) else b"0",
            len(call.full),
        )
        return head + call.full + self._error_scope(call)

    @staticmethod
    def carrying(args: list[Any], results: list[bytes]) -> list[Any]:
        """``args``, the round trip's id (unique: a retry of it is answered, not run again),
        then the held ``results`` and their count (``lua/pending.lua``)."""
        return [*args, _TRIP_ID.pack(process_number(), next(_TRIPS)), *results, len(results)]

    def _error_scope(self, call: CallKey) -> bytes:
        """What a run of same errors belongs to (the scripts' "tool"): the tool (a shell tool's
        program), or for a batch tool the identical call (as ``SameErrorBreaker`` counts it in
        process)."""
        tool = self._tools.get(call.tool) or self._tool(call.tool)
        return tool.scope + call.key.to_bytes(8, "big") if tool.batch else self._program_scope(call, tool)

    @staticmethod
    def _program_scope(call: CallKey, tool: _Tool) -> bytes:
        """The tool's scope, or a shell tool's with the program its command runs (``error_scope``)."""
        scope = error_scope(call)
        return tool.scope if scope is call.tool else _tool_id(scope)

    def rule(self, kind: str, code: str, tool: str) -> str:
        """The configuration key of a denial from the script (as the breaker in process names it)."""
        breaker = self._by_kind.get(kind)
        try:  # your own breaker's may raise: its denial stands, unnamed
            return str(breaker.script_rule(code, tool)) if breaker is not None else ""
        except Exception:
            return ""

    def _window_limits(self, tool: str) -> tuple[int, int]:
        """The window limit for a call of ``tool`` without and with a known result."""
        window = self._window
        if window is None:
            return 0, 0
        own = window.tool_limits.get(tool)
        if own is not None:
            return own, own
        return window.limit, window.result_limit or window.limit


def _assemble(
    breakers: tuple[Breaker, ...], warners: tuple[Breaker, ...], window: int, ttl_ms: int
) -> tuple[str, str, str, tuple[str, str]]:
    """The decide and flush scripts of a guard, both as one Redis Function library, and the
    names of its two functions: its settings, then the definitions shared by both (the fragment
    of each kind of its breakers once, in the guard's order), then what each runs per call
    (``lua/pending.lua``, its driver)."""
    sources: dict[str, str] = {b.kind: fragment_source(type(b)) for b in breakers}
    ops = {kind: fragment_ops(source) for kind, source in sources.items()}
    settings = ", ".join(filter(None, (_settings(breakers), _settings(warners))))
    header = f"local size, ttl, breakers = {window}, {ttl_ms}, {{{settings}}}\n" + _op_lists(breakers, ops)
    load_state, positions = _load_state(list(sources.values()))
    definitions = header + _COMMON + "".join(sources.values()) + _OBSERVE
    runs = {"decide": _PENDING + _DECIDE, "flush": _PENDING + _FLUSH}
    # Named by its content: a guard with other settings loads a library of its own.
    name = "loopfuse_" + hashlib.sha1((definitions + "".join(runs.values())).encode("utf-8")).hexdigest()[:24]
    scripts = (*(definitions + run for run in runs.values()), _library(name, definitions, runs))
    decide, flush, library = (_resolve_fields(script, load_state, positions) for script in scripts)
    return decide, flush, library, (f"{name}_decide", f"{name}_flush")


def _library(name: str, definitions: str, runs: dict[str, str]) -> str:
    """The library ``name`` of functions ``<name>_<run>``: the definitions run once, when Redis
    loads it, and each call only sets ``KEYS`` and ``ARGV`` for its run's per-call code."""
    functions = "".join(
        f"redis.register_function('{name}_{run}', function(keys, args)\n"
        f"KEYS, ARGV = keys, args\n{body}\nend)\n"
        for run, body in runs.items()
    )
    return f"#!lua name={name}\nlocal KEYS, ARGV\n{definitions}{functions}"


def fragment_source(cls: type[Any]) -> str:
    """The Lua fragment of a breaker class: ``lua/breakers/<kind>.lua``, or the file its
    ``lua_file`` names (a breaker outside the package)."""
    own = getattr(cls, "lua_file", None)
    if own is not None:
        return Path(own).read_text(encoding="utf-8")
    return _source(f"breakers/{cls.kind}")


def fragment_fields(source: str) -> tuple[str, ...]:
    """The state hash fields a fragment reads from ``F``, as its ``-- fields:`` lines name them."""
    return tuple(name for line in _FIELDS_LINE.findall(source) for name in line.split())


def fragment_ops(source: str) -> tuple[str, ...]:
    """What a fragment's unit does besides ``check`` (``refused``, ``record``, ``observe``,
    ``touch``), as its ``-- ops:`` line names them; ``ValueError`` for another name."""
    named = tuple(name for line in _OPS_LINE.findall(source) for name in line.split())
    unknown = sorted(set(named) - set(_OPS))
    if unknown:
        raise ValueError(f"a Lua fragment names the op(s) {', '.join(unknown)}: use {', '.join(_OPS)}")
    return tuple(name for name in named if name != "check")


def _load_state(fragments: list[str]) -> tuple[str, dict[str, int]]:
    """What ``load_state()`` stands for: one ``HMGET`` of the driver's fields and those the
    fragments read; and each field's position in its reply."""
    names = dict.fromkeys((*_DRIVER_FIELDS, *(n for f in fragments for n in fragment_fields(f))))
    for name in names:
        if not _FIELD_NAME.fullmatch(name):
            raise ValueError(f"a Lua fragment declares the field {name!r}: use letters, digits, _ and :")
    fields = ", ".join(f"'{n}'" for n in names)
    return f"redis.call('HMGET', KEYS[1], {fields})", {name: i for i, name in enumerate(names, 1)}


def _resolve_fields(script: str, load_state: str, positions: dict[str, int]) -> str:
    """``script`` with ``load_state()`` written out, each ``F.name`` (or ``F['name']``) read as
    ``F[<its position>]`` and each ``put('name', ...)`` as ``put(<its position>, 'name', ...)``:
    ``F`` is the ``HMGET`` reply itself, so a run builds no table and calls no function for it.
    A field no one declares is a ``ValueError``."""

    def position(name: str) -> int:
        if name not in positions:
            raise ValueError(f"a Lua fragment uses the field {name!r} that no '-- fields:' line declares")
        return positions[name]

    script = script.replace("load_state()", load_state)
    script = _FIELD_REF.sub(lambda m: f"F[{position(m.group(1) or m.group(2))}]", script)
    return _FIELD_PUT.sub(lambda m: f"put({position(m.group(1))}, '{m.group(1)}'", script)


def _tool_id(tool: str) -> bytes:
    """The tool's name, prefixed so that no tool equals the empty "no tool" value."""
    return b"=" + tool.encode("utf-8", "surrogatepass")


def _settings(breakers: tuple[Breaker, ...]) -> str:
    """Each breaker as ``{kind, setting...}``; a warner (a copy at ``warn_at``) as
    ``{kind, setting..., warn = <warn_at>}``: the scripts let it warn, never deny or record."""
    units: list[Any] = list(breakers)  # the registry's own breakers: each has lua_settings
    return ", ".join(
        "{" + ", ".join([f"'{b.kind}'", *map(str, b.lua_settings()), *_warn(b)]) + "}" for b in units
    )


def _op_lists(breakers: tuple[Breaker, ...], ops: dict[str, tuple[str, ...]]) -> str:
    """The line binding ``RECORDING``, ``OBSERVING`` and ``TOUCHING``, the settings of the
    breakers whose unit has that op in the guard's order, which the drivers loop over; and
    ``REFUSING``, the set of those whose unit has ``refused`` (warners have no op)."""

    def having(op: str) -> list[str]:
        return [f"breakers[{i}]" for i, b in enumerate(breakers, 1) if op in ops.get(b.kind, ())]

    lists = [f"{{{', '.join(having(op))}}}" for op in ("record", "observe", "touch")]
    refusing = "{" + ", ".join(f"[{b}] = true" for b in having("refused")) + "}"
    return f"local RECORDING, OBSERVING, TOUCHING, REFUSING = {', '.join(lists)}, {refusing}\n"


def _warn(breaker: Any) -> list[str]:
    warn_at = getattr(breaker, "warn_at", 0)
    return [f"warn = {warn_at}"] if warn_at else []
