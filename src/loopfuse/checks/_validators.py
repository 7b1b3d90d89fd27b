"""Validators for configuration values: each returns the value or raises a ``ConfigError``
naming the section, the key, the value and what is allowed."""

from __future__ import annotations

import math
import os
import re
import stat
import string
from collections.abc import Mapping
from typing import Any

from .._volatile import MASKS
from ..errors import ConfigError

__all__ = [
    "MAX_REPEATS_ENV",
    "MAX_WINDOW",
    "TEMPLATE_ALLOWED",
    "check_bool",
    "check_choice",
    "check_instance",
    "check_int",
    "check_list",
    "check_log_path",
    "check_masks",
    "check_names",
    "check_number",
    "check_optional_int",
    "check_optional_str",
    "check_template",
    "check_window",
    "fail",
    "log_path_problem",
    "log_write_problem",
    "resolve_max_repeats",
    "template_problem",
]

MAX_REPEATS_ENV = "LOOPFUSE_MAX_REPEATS"
_PLACEHOLDERS = {
    "tool": "bash",
    "count": 7,
    "limit": 6,
    "kind": "duplicate",
    "rule": "circuit_breaker.duplicate_limit",
}


def fail(section: str, key: str, value: Any, allowed: str) -> ConfigError:
    return ConfigError(f"[{section}] {key} = {_shown(value)} is not allowed: expected {allowed}")


def check_list(name: str, value: Any) -> list[Any]:
    """``value``'s items; a ``ConfigError`` for one object or None where a list goes (``[mine]``)."""
    try:
        if not isinstance(value, str | bytes | Mapping):
            return list(value)
    except Exception:  # not iterable, or an iterable that raises
        pass
    raise ConfigError(f"{name} = {type(value).__name__} is not allowed: expected a list ({name}=[...])")


def check_instance(where: str, value: Any, cls: type[Any]) -> None:
    """Raise unless ``value`` is a ``cls``: a section built in code rather than read from a file."""
    if not isinstance(value, cls):
        raise ConfigError(f"{where} = {_shown(value)} is not allowed: expected a {cls.__name__}")


def _shown(value: Any) -> str:
    """``repr(value)``, or what it is when too long for ``repr`` (an int of over 4,300 digits)."""
    try:
        return repr(value)
    except ValueError:
        return f"<{type(value).__name__} too long to show>"


def check_int(section: str, key: str, value: Any, minimum: int) -> int:
    """``value`` as an int of at least ``minimum`` (a bool is not an int here)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise fail(section, key, value, f"an integer >= {minimum}")
    return value


MAX_WINDOW = 10_000


def check_window(section: str, key: str, value: Any, minimum: int) -> int:
    """``value`` as a window length from ``minimum`` to ``MAX_WINDOW``: an agent's memory, and
    on Redis each call's work, grow with its windows."""
    if isinstance(value, bool) or not isinstance(value, int) or not minimum <= value <= MAX_WINDOW:
        raise fail(section, key, value, f"an integer from {minimum} to {MAX_WINDOW}")
    return value


def check_number(section: str, key: str, value: Any, minimum: float, maximum: float | None = None) -> float:
    """``value`` as a finite float of at least ``minimum`` and at most ``maximum`` (no bool,
    NaN or infinity, and no int too large for a float)."""
    number = _finite(value)
    if maximum is not None and (number is None or not minimum <= number <= maximum):
        raise fail(section, key, value, f"a number from {minimum} to {maximum:g}")
    if number is None or number < minimum:
        raise fail(section, key, value, f"a number >= {minimum} and finite")
    return number


def _finite(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


def check_bool(section: str, key: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise fail(section, key, value, "true or false")
    return value


def check_names(section: str, key: str, value: Any) -> tuple[str, ...]:
    if isinstance(value, str) or not isinstance(value, list | tuple | frozenset | set):
        raise fail(section, key, value, "a list of names")
    if not all(isinstance(v, str) and v for v in value):
        raise fail(section, key, value, "a list of non-empty strings")
    return tuple(value)


def check_choice(section: str, key: str, value: Any, choices: tuple[str, ...]) -> str:
    if value not in choices:
        raise fail(section, key, value, "one of " + ", ".join(repr(c) for c in choices))
    return str(value)


def check_masks(section: str, key: str, value: Any) -> tuple[str, ...]:
    names = check_names(section, key, value)
    if not set(names) <= set(MASKS):
        raise fail(section, key, value, "a list drawn from " + ", ".join(MASKS))
    return names


def check_optional_int(section: str, key: str, value: Any, minimum: int) -> int | None:
    return None if value is None else check_int(section, key, value, minimum)


def check_optional_str(section: str, key: str, value: Any) -> str | None:
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise fail(section, key, value, "a string")
    return value


TEMPLATE_ALLOWED = "a text whose only placeholders are {tool}, {count}, {limit}, {kind}, {rule}"


def check_template(section: str, key: str, value: Any) -> str | None:
    text = check_optional_str(section, key, value)
    problem = None if text is None else template_problem(text)
    if problem is not None:
        raise fail(section, key, value, f"{TEMPLATE_ALLOWED} ({problem})")
    return text


_TEMPLATE_SLACK = 1024  # characters a denial text may have beyond its template's own
_WIDE = re.compile(r"\d{5,}")  # a width or precision of 10,000 or more


def template_problem(text: str) -> str | None:
    """What keeps ``text`` from being a denial template, None when nothing does: it names only
    the placeholders, none of their attributes or items, with format specs that suit them, and
    renders to at most 1,024 characters more than its own (no spec padding it to megabytes)."""
    try:
        fields = [(name, spec) for _, name, spec, _ in string.Formatter().parse(text) if name is not None]
    except ValueError as exc:  # an unmatched brace
        return str(exc)
    for name, spec in fields:
        if name not in _PLACEHOLDERS:
            return f"{{{name}}} is none of them"
        if "{" in (spec or ""):
            return f"{{{name}:{spec}}} takes its format spec from a field"
        if _WIDE.search(spec or ""):  # checked before rendering: a width of 10**9 takes a gigabyte
            return f"{{{name}:{spec}}} pads the text by more than {_TEMPLATE_SLACK:,} characters"
    try:
        rendered = text.format(**_PLACEHOLDERS)
    except (ValueError, TypeError) as exc:
        return f"a format spec does not suit its value: {exc}"
    if len(rendered) > len(text) + _TEMPLATE_SLACK:
        return f"its format specs pad the text by more than {_TEMPLATE_SLACK:,} characters"
    return None


def resolve_max_repeats(value: Any = None, source: str = "max_repeats") -> int:
    """The loop brake's limit: ``value``, else ``$LOOPFUSE_MAX_REPEATS``, else 3."""
    if value is None:
        raw = os.environ.get(MAX_REPEATS_ENV)
        if raw is None or raw.strip() == "":
            return 3
        value, source = _parse_env_int(raw), f"environment variable {MAX_REPEATS_ENV}"
        if value is None:
            raise ConfigError(f"{source} = {raw!r} is not allowed: expected an integer >= 1")
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(f"{source} = {value!r} is not allowed: expected an integer >= 1")
    return value


def _parse_env_int(raw: str) -> int | None:
    try:
        return int(raw.strip())
    except ValueError:
        return None


def check_log_path(section: str, key: str, value: Any) -> str | None:
    """A path to append lines to: a regular file, or a new file in an existing directory
    (never a FIFO, device or directory, which could block or swallow every write)."""
    path = check_optional_str(section, key, value)
    problem = None if path is None else log_path_problem(path)
    if problem is not None:
        raise fail(section, key, value, problem)
    return path


def log_write_problem(path: str) -> str | None:
    """Why this process could not write a log at ``path`` (a valid one), or None."""
    exists = os.path.exists(path)
    target = path if exists else os.path.dirname(path) or "."
    if os.access(target, os.W_OK if exists else os.W_OK | os.X_OK):
        return None
    return f"a file this process can write ({target!r} is not writable by it)"


def log_path_problem(path: str) -> str | None:
    """What a log at ``path`` would need to be, when it cannot be one; None when it can."""
    allowed = "a regular file, or a new file in an existing directory"
    if "\0" in path:
        return allowed + " (no NUL byte)"
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        parent = os.path.dirname(path) or "."
        return None if os.path.isdir(parent) else allowed + f" ({parent!r} is not a directory)"
    except OSError as exc:
        return allowed + f" ({exc.strerror})"
    return None if stat.S_ISREG(mode) else allowed + " (it exists and is not a regular file)"
