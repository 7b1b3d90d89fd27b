"""Configuration: typed sections, validated at construction, read from mappings and files.

Every error is a ``ConfigError`` that names the section, the key, the value and what
is allowed. Section and key spellings of the original plugins (``circuit-breaker``,
``duplicateLimit``) are accepted and mean the same as the snake_case ones.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ._config_files import config_path, has_loopfuse_table, load_config_file
from ._store_config import StoreConfig
from ._vocabulary import (
    GUARD_WIDE,
    KIND_SECTIONS,
    errors_as_written,
    normalize_name,
    normalized_keys,
    to_storage,
)
from .breakers.cycle import CycleConfig
from .breakers.invalid import InvalidConfig
from .breakers.near_duplicate import DEFAULT_MASKS, DEFAULT_VOLATILE_KEYS, NearDuplicateConfig
from .breakers.registry import unit_sections
from .breakers.same_error import SameErrorConfig
from .breakers.stall import StallConfig
from .checks import (
    check_bool,
    check_choice,
    check_instance,
    check_int,
    check_log_path,
    check_masks,
    check_names,
    check_number,
    check_optional_int,
    check_template,
    check_window,
    fail,
    resolve_max_repeats,
)
from .errors import ConfigError

__all__ = [
    "DEFAULT_MASKS",
    "DEFAULT_VOLATILE_KEYS",
    "CircuitBreakerConfig",
    "CycleConfig",
    "GuardConfig",
    "GuardSettings",
    "InvalidConfig",
    "LoopBrakeConfig",
    "NearDuplicateConfig",
    "SameErrorConfig",
    "StallConfig",
    "StoreConfig",
    "ToolRule",
    "find_config_file",
    "load_config_file",
    "normalize_name",
    "parse_config",
    "parse_config_file",
    "resolve_max_repeats",
]

DEFAULT_EXEMPT = ("todo_write", "ask_user_question", "exit_plan_mode")
DEFAULT_IGNORE_ARGS = ("description", "explanation", "reason", "thought", "purpose")
MODES = ("enforce", "shadow")
CONFIG_ENV = "LOOPFUSE_CONFIG"
_DEFAULT_WINDOW = 200


@dataclass(frozen=True)
class CircuitBreakerConfig:
    """Section ``circuit_breaker``: the window breaker and the call cap."""

    enabled: bool = True
    duplicate_limit: int = 6
    window: int = _DEFAULT_WINDOW
    max_calls_per_agent: int = 300
    exempt: tuple[str, ...] = DEFAULT_EXEMPT
    only: tuple[str, ...] = ()
    ignore_args: tuple[str, ...] = DEFAULT_IGNORE_ARGS
    deny_message: str | None = None
    incident_log: str | None = None
    result_aware: bool = True
    result_limit: int | None = None
    same_result_limit: int = 5
    progress_limit: int | None = None
    warn_at: int = 0
    duplicate_enabled: bool = True  # [duplicate] enabled: the window alone (the cap stays)
    cap_enabled: bool = True  # [cap] enabled: the cap alone (the window stays)

    def __post_init__(self) -> None:
        s = "circuit_breaker"
        check_int(s, "warn_at", self.warn_at, 0)
        check_bool(s, "duplicate_enabled", self.duplicate_enabled)
        check_bool(s, "cap_enabled", self.cap_enabled)
        check_bool(s, "enabled", self.enabled)
        check_bool(s, "result_aware", self.result_aware)
        check_int(s, "duplicate_limit", self.duplicate_limit, 1)
        # Unset, the result rules follow duplicate_limit: 7 and 8 at the default of 6.
        if self.result_limit is None:
            object.__setattr__(self, "result_limit", self.duplicate_limit + 1)
        if self.progress_limit is None:
            object.__setattr__(self, "progress_limit", self.duplicate_limit + 2)
        for key in ("result_limit", "same_result_limit", "progress_limit"):
            check_int(s, key, getattr(self, key), 0)
        check_window(s, "window", self.window, 1)
        self._check_window()
        check_int(s, "max_calls_per_agent", self.max_calls_per_agent, 0)
        for key in ("exempt", "only", "ignore_args"):
            object.__setattr__(self, key, check_names(s, key, getattr(self, key)))
        object.__setattr__(self, "deny_message", check_template(s, "deny_message", self.deny_message))
        object.__setattr__(self, "incident_log", check_log_path(s, "incident_log", self.incident_log))

    def _check_window(self) -> None:
        """``duplicate_limit`` at most ``window``: the error names the window when it was
        changed from its default, else the limit (the key the file wrote)."""
        limit, window = self.duplicate_limit, self.window
        if window >= limit:
            return
        if window != _DEFAULT_WINDOW:
            raise fail("circuit_breaker", "window", window, f"at least duplicate_limit ({limit})")
        raise fail("circuit_breaker", "duplicate_limit", limit, f"at most window ({window})")


@dataclass(frozen=True)
class LoopBrakeConfig:
    """Section ``loop_brake``: deny the next identical call after ``max_repeats`` in a row."""

    enabled: bool = True
    max_repeats: int | None = None
    result_aware: bool = False
    warn_at: int = 0

    def __post_init__(self) -> None:
        check_int("loop_brake", "warn_at", self.warn_at, 0)
        check_bool("loop_brake", "enabled", self.enabled)
        check_bool("loop_brake", "result_aware", self.result_aware)
        resolved = resolve_max_repeats(self.max_repeats, "[loop_brake] max_repeats")
        object.__setattr__(self, "max_repeats", resolved)


@dataclass(frozen=True)
class GuardSettings:
    """Section ``guard``: agent bookkeeping and escalation."""

    max_agents: int = 100_000
    agent_idle_seconds: float = 86_400.0
    abort_after_denials: int | None = 3
    mode: str = "enforce"

    def __post_init__(self) -> None:
        s = "guard"
        check_choice(s, "mode", self.mode, MODES)
        check_int(s, "max_agents", self.max_agents, 1)
        idle = check_number(s, "agent_idle_seconds", self.agent_idle_seconds, 0.001)
        object.__setattr__(self, "agent_idle_seconds", idle)
        denials = self.abort_after_denials  # 0: off, after the check (false, 0.0 or `no` are errors)
        if denials is not None and check_int(s, "abort_after_denials", denials, 0) == 0:
            object.__setattr__(self, "abort_after_denials", None)


@dataclass(frozen=True)
class ToolRule:
    """One table of section ``tools``: rules for a single tool (None: the global value).

    ``batch`` declares a tool called legitimately over many items (one call per id, file,
    page): its near-duplicate key keeps the exact arguments (no masking), and its run of
    same errors counts only identical calls."""

    tool: str = ""
    exempt: bool = False
    batch: bool = False
    identity_args: tuple[str, ...] | None = None
    ignore_args: tuple[str, ...] = ()
    duplicate_limit: int | None = None
    near_duplicate_limit: int | None = None
    masks: tuple[str, ...] | None = None
    volatile_keys: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        s = f"tools.{self.tool}"
        check_bool(s, "exempt", self.exempt)
        check_bool(s, "batch", self.batch)
        if self.identity_args is not None:
            object.__setattr__(self, "identity_args", check_names(s, "identity_args", self.identity_args))
        if self.masks is not None:
            object.__setattr__(self, "masks", check_masks(s, "masks", self.masks))
        for key in ("ignore_args", "volatile_keys"):
            object.__setattr__(self, key, check_names(s, key, getattr(self, key)))
        for key in ("duplicate_limit", "near_duplicate_limit"):
            check_optional_int(s, key, getattr(self, key), 1)


@dataclass(frozen=True)
class GuardConfig:
    """The whole configuration. A missing ``loop_brake`` section means no loop brake."""

    circuit_breaker: CircuitBreakerConfig = field(default_factory=CircuitBreakerConfig)
    loop_brake: LoopBrakeConfig | None = None
    guard: GuardSettings = field(default_factory=GuardSettings)
    cycle: CycleConfig = field(default_factory=CycleConfig)
    near_duplicate: NearDuplicateConfig = field(default_factory=NearDuplicateConfig)
    same_error: SameErrorConfig = field(default_factory=SameErrorConfig)
    invalid: InvalidConfig = field(default_factory=InvalidConfig)
    tools: Mapping[str, ToolRule] = field(default_factory=dict)
    store: StoreConfig = field(default_factory=StoreConfig)
    sections: Mapping[str, Any] = field(default_factory=dict)  # other breakers' sections, by name

    def __post_init__(self) -> None:
        """Every breaker section without a field of its own, at its defaults unless given (so
        that a file writing out the defaults equals no file)."""
        _check_section_types(self)
        given = dict(self.sections)
        full = {name: given.get(name) or SECTIONS[name]() for name in SECTIONS if name not in _FIELDS}
        object.__setattr__(self, "sections", full)
        self._check_tool_limits()

    def _check_tool_limits(self) -> None:
        """A tool's limit above its breaker's window would never deny: refused, as globally."""
        windows = {
            "duplicate_limit": ("[duplicate] window", self.circuit_breaker.window),
            "near_duplicate_limit": ("[near_duplicate] window", self.near_duplicate.window),
        }
        for rule in self.tools.values() if isinstance(self.tools, Mapping) else ():
            for key, (name, window) in windows.items():
                limit = getattr(rule, key, None)
                if isinstance(limit, int) and limit > window:
                    raise fail(f"tools.{rule.tool}", key, limit, f"at most {name} ({window})")

    def section(self, name: str) -> Any:
        """The parsed section ``name`` (a breaker's: its defaults when the file has none)."""
        if name in _FIELDS:
            return getattr(self, name)
        given = self.sections.get(name)
        return given if given is not None else SECTIONS[name]()

    def with_sections(self, changes: Mapping[str, Any]) -> GuardConfig:
        """A copy with the sections ``changes`` names replaced (named fields or breakers' own)."""
        named = {name: value for name, value in changes.items() if name in _FIELDS}
        other = {name: value for name, value in changes.items() if name not in _FIELDS}
        return dataclasses.replace(self, **named, sections={**self.sections, **other})

    def breaker_sections(self) -> dict[str, Any]:
        """Each section with an ``enabled`` switch, by name (an absent ``loop_brake`` is none)."""
        names = [f.name for f in dataclasses.fields(self) if f.name != "sections"] + list(unit_sections())
        found = {name: self.section(name) for name in dict.fromkeys(names)}
        return {n: s for n, s in found.items() if dataclasses.is_dataclass(s) and hasattr(s, "enabled")}


SECTIONS: dict[str, type[Any]] = {
    "circuit_breaker": CircuitBreakerConfig,
    "loop_brake": LoopBrakeConfig,
    "guard": GuardSettings,
    "cycle": CycleConfig,
    "near_duplicate": NearDuplicateConfig,
    "same_error": SameErrorConfig,
    "invalid": InvalidConfig,
    "tools": ToolRule,
    "store": StoreConfig,
}
SECTIONS.update({name: cls for name, cls in unit_sections().items() if name not in SECTIONS})
_FIELDS = frozenset(f.name for f in dataclasses.fields(GuardConfig)) - {"sections"}


def _check_section_types(config: GuardConfig) -> None:
    """A GuardConfig built in code holds sections (``Guard.from_config`` takes a file's tables)."""
    for name in _FIELDS - {"tools", "loop_brake"}:
        check_instance(f"GuardConfig {name}", getattr(config, name), SECTIONS[name])
    if config.loop_brake is not None:
        check_instance("GuardConfig loop_brake", config.loop_brake, LoopBrakeConfig)
    check_instance("GuardConfig tools", config.tools, Mapping)
    for tool, rule in config.tools.items():
        check_instance(f"GuardConfig tools[{tool!r}]", rule, ToolRule)
    check_instance("GuardConfig sections", config.sections, Mapping)
    others = sorted(set(SECTIONS) - _FIELDS)
    for name, section in config.sections.items():
        if name not in others:
            raise ConfigError(f"GuardConfig sections[{name!r}] is not allowed: expected {', '.join(others)}")
        if section is not None:
            check_instance(f"GuardConfig sections[{name!r}]", section, SECTIONS[name])


def parse_config(mapping: Mapping[str, Any]) -> GuardConfig:
    """A ``GuardConfig`` from a mapping of sections (as read from TOML or YAML)."""
    if not isinstance(mapping, Mapping):
        raise ConfigError(
            f"configuration = {type(mapping).__name__} is not allowed: expected a mapping of sections"
            " (a file's path goes to Guard.from_file)"
        )
    sections = normalized_keys(mapping, "configuration", {*SECTIONS, *KIND_SECTIONS, "mode"})
    if "mode" in sections:
        sections["guard"] = _top_level_mode(sections.pop("mode"), sections.get("guard", {}))
    sections, renames = to_storage(sections)
    with errors_as_written(renames):
        built = {name: _build_section(name, body) for name, body in sections.items()}
        named = {name: value for name, value in built.items() if name in _FIELDS}
        config = GuardConfig(**named, sections={n: v for n, v in built.items() if n not in _FIELDS})
        _check_warnings(config)
    return config


def _check_warnings(config: GuardConfig) -> None:
    """``ConfigError`` for a ``warn_at`` at which its breaker already denies (it never warns)."""
    from .breakers.build import build_warners  # the breakers are built from this module's types

    build_warners(config)


def _top_level_mode(mode: Any, guard: Any) -> Any:
    """``mode = "shadow"`` at the top of a file is ``[guard] mode``; a conflict is an error."""
    if not isinstance(guard, Mapping):
        return guard  # reported by the [guard] section itself
    given = {normalize_name(str(k)): v for k, v in guard.items()}.get("mode", mode)
    if given != mode:
        raise ConfigError(f"mode = {mode!r} and [guard] mode = {given!r} disagree; keep one")
    return {**guard, "mode": mode}


def _build_section(name: str, body: Any) -> Any:
    cls = SECTIONS[name]
    if not isinstance(body, Mapping):
        raise ConfigError(f"[{name}] = {body!r} is not allowed: expected a table of keys")
    if name == "tools":
        return {_tool_name(tool): _build_tool_rule(tool, rule) for tool, rule in body.items()}
    allowed = {f.name for f in dataclasses.fields(cls)}
    keys = normalized_keys(body, f"[{name}]", allowed | set(GUARD_WIDE) if name == "guard" else allowed)
    if name == "guard" and "abort_after_denials" in keys and keys["abort_after_denials"] is None:
        raise fail(name, "abort_after_denials", None, "an integer >= 0 (0 turns escalation off)")
    return cls(**keys)


def _tool_name(tool: Any) -> str:
    """A ``[tools.*]`` table's name: a string (YAML reads ``1:`` as a number and ``null:`` as
    nothing; made strings, ``1`` and ``'1'`` would be one tool and the first rule lost)."""
    if not isinstance(tool, str):
        raise ConfigError(f"[tools] {tool!r} is not allowed: expected a tool name, a string (quote it)")
    return tool


def _build_tool_rule(tool: str, body: Any) -> ToolRule:
    if not isinstance(body, Mapping):
        raise ConfigError(f"[tools.{tool}] = {body!r} is not allowed: expected a table of keys")
    allowed = {f.name for f in dataclasses.fields(ToolRule)} - {"tool"}
    return ToolRule(tool=tool, **normalized_keys(body, f"[tools.{tool}]", allowed))


def parse_config_file(path: str | os.PathLike[str]) -> GuardConfig:
    """The ``GuardConfig`` in a file; every ``ConfigError`` names the file (and, for
    pyproject.toml, the ``[tool.loopfuse]`` table)."""
    mapping = load_config_file(path)
    with in_file(path):
        return parse_config(mapping)


@contextlib.contextmanager
def in_file(path: str | os.PathLike[str]) -> Iterator[None]:
    """Re-raise a ``ConfigError`` prefixed with the configuration file it came from."""
    try:
        yield
    except ConfigError as exc:
        text = str(exc)
        where = f"configuration file {str(Path(path))!r}"
        if text.startswith(where):
            raise
        if Path(path).name == "pyproject.toml":
            where += " [tool.loopfuse]"
        raise ConfigError(f"{where}: {text}") from exc


def find_config_file(explicit: str | os.PathLike[str] | None = None) -> Path | None:
    """The configuration to use: ``explicit``, ``$LOOPFUSE_CONFIG``, ``./loopfuse.toml``,
    then ``./pyproject.toml`` when it has a ``[tool.loopfuse]`` table; None when none applies."""
    if explicit is not None:
        return config_path(explicit)
    if os.environ.get(CONFIG_ENV):
        return Path(os.environ[CONFIG_ENV])
    if Path("loopfuse.toml").is_file():
        return Path("loopfuse.toml")
    pyproject = Path("pyproject.toml")
    if pyproject.is_file() and has_loopfuse_table(pyproject):
        return pyproject
    return None
