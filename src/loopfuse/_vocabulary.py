"""One vocabulary from file to class: each breaker's section named after its kind.

``[duplicate]``, ``[cap]`` and ``[repeat]`` name the window breaker, the call cap and the loop
brake as their ``kind`` does, and the guard-wide keys (``exempt``, ``only``, ``ignore_args``,
``deny_message``, ``incident_log``) live under ``[guard]``. The seed spellings
(``[circuit_breaker]``, ``[loop_brake]``, ``circuit-breaker``, camelCase keys) keep working:
both are read into the same ``GuardConfig`` fields, and a key given in both spellings is an
error. An error about a key names it as the file spelled it.
"""

from __future__ import annotations

import contextlib
import difflib
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from .errors import ConfigError

__all__ = [
    "GUARD_WIDE",
    "KIND_SECTIONS",
    "did_you_mean",
    "errors_as_written",
    "normalize_name",
    "normalized_keys",
    "to_storage",
]

# section as the kind names it -> (section it is kept in, {key as written: key kept})
KIND_SECTIONS: dict[str, tuple[str, dict[str, str]]] = {
    "duplicate": (
        "circuit_breaker",
        {
            "enabled": "duplicate_enabled",
            "limit": "duplicate_limit",
            **{k: k for k in ("window", "result_aware", "result_limit", "same_result_limit")},
            **{k: k for k in ("progress_limit", "warn_at")},
        },
    ),
    "cap": ("circuit_breaker", {"limit": "max_calls_per_agent", "enabled": "cap_enabled"}),
    "repeat": (
        "loop_brake",
        {"limit": "max_repeats", **{k: k for k in ("enabled", "max_repeats", "result_aware", "warn_at")}},
    ),
}
GUARD_WIDE = ("exempt", "only", "ignore_args", "deny_message", "incident_log")
Renames = dict[tuple[str, str], tuple[str, str]]  # (section, key) kept -> as written


def to_storage(sections: dict[str, Any]) -> tuple[dict[str, Any], Renames]:
    """``sections`` with the kinds' sections and ``[guard]``'s guard-wide keys moved to the
    sections they are kept in, and what was renamed (for error messages)."""
    out = {name: body for name, body in sections.items() if name not in KIND_SECTIONS}
    renames: Renames = {}
    for name, (kept, keys) in KIND_SECTIONS.items():
        if name in sections:
            _move(out, renames, _table(name, sections[name]), (name, kept), keys)
    guard = out.get("guard")
    if isinstance(guard, Mapping):
        wide = {k: v for k, v in guard.items() if _norm(k) in GUARD_WIDE}
        out["guard"] = {k: v for k, v in guard.items() if _norm(k) not in GUARD_WIDE}
        _move(out, renames, wide, ("guard", "circuit_breaker"), {k: k for k in GUARD_WIDE})
    return out, renames


def _move(
    out: dict[str, Any],
    renames: Renames,
    body: Mapping[str, Any],
    where: tuple[str, str],
    keys: dict[str, str],
) -> None:
    written, kept = where
    target = dict(_table(kept, out.get(kept, {})))
    existing = {_norm(k) for k in target}
    for raw, value in body.items():
        key = _norm(raw)
        if key not in keys:
            hint = did_you_mean(key, keys)
            raise ConfigError(f"[{written}]: unknown key {raw!r}{hint}; allowed: {', '.join(sorted(keys))}")
        if keys[key] in existing:
            raise ConfigError(f"[{written}] {raw} and [{kept}] {keys[key]} set one value; keep one")
        target[keys[key]] = value
        existing.add(keys[key])
        renames[(kept, keys[key])] = (written, key)
    out[kept] = target


def _table(name: str, body: Any) -> Mapping[str, Any]:
    if not isinstance(body, Mapping):
        raise ConfigError(f"[{name}] = {body!r} is not allowed: expected a table of keys")
    return body


def normalize_name(name: str) -> str:
    """``circuit-breaker`` and ``maxCallsPerAgent`` as ``circuit_breaker``, ``max_calls_per_agent``."""
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).replace("-", "_").lower()


def _norm(name: Any) -> str:
    return normalize_name(str(name))


@contextlib.contextmanager
def errors_as_written(renames: Renames) -> Iterator[None]:
    """Re-raise a ``ConfigError`` about a renamed key with the key as the file wrote it."""
    try:
        yield
    except ConfigError as exc:
        text = _as_written(str(exc), renames)
        if text == str(exc):
            raise
        raise ConfigError(text) from exc


_HEADER = re.compile(r"\[(\w+)\] (\w+) =")  # [section] key = (the key an error is about)
_REFERENCE = re.compile(r"\b(\w+)(?= \()")  # key (value): another key the allowed part names


def _as_written(text: str, renames: Renames) -> str:
    """``text`` naming its key, and the keys of the same section its allowed part names
    ("at least duplicate_limit (7)"), as the file wrote them."""
    head = _HEADER.search(text)
    if head is None:
        return text
    kept, key = head.groups()
    written, as_written = renames.get((kept, key), (kept, key))
    value, expected, allowed = text[head.end() :].partition(": expected ")  # keys only after
    allowed = _REFERENCE.sub(lambda m: _reference(m.group(1), (kept, written), renames), allowed)
    return f"{text[: head.start()]}[{written}] {as_written} ={value}{expected}{allowed}"


def _reference(key: str, sections: tuple[str, str], renames: Renames) -> str:
    """``key`` of section ``kept`` as named in an error about section ``written``: as the file
    wrote it (with its section when that is another), else in ``written``'s spelling."""
    kept, written = sections
    if (kept, key) in renames:
        section, name = renames[(kept, key)]
        return name if section == written else f"[{section}] {name}"
    home, keys = KIND_SECTIONS.get(written, (kept, {}))
    spelled = {stored: name for name, stored in keys.items() if stored != name} if home == kept else {}
    return spelled.get(key, key)


def normalized_keys(mapping: Mapping[str, Any], where: str, allowed: set[str]) -> dict[str, Any]:
    """``mapping`` with its keys normalized; a ``ConfigError`` names one not ``allowed`` (with
    the closest spelling) or two spellings of one key."""
    out: dict[str, Any] = {}
    spelled: dict[str, str] = {}
    for raw, value in mapping.items():
        key = _norm(raw)
        if key not in allowed:
            names = ", ".join(sorted(allowed))
            what = "section" if where == "configuration" else "key"
            hint = did_you_mean(key, allowed)
            raise ConfigError(f"{where}: unknown {what} {raw!r}{hint}; allowed: {names}")
        if key in out:
            raise ConfigError(
                f"{where}: {spelled[key]!r} and {raw!r} are both spellings of {key!r}; keep one"
            )
        out[key] = list(value) if isinstance(value, list) else value
        spelled[key] = str(raw)
    return out


def did_you_mean(key: str, allowed: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` for the closest allowed name, or nothing."""
    close = difflib.get_close_matches(key, sorted(allowed), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""
