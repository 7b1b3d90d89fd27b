"""A library breaker built by hand and passed in ``breakers=``: its numbers and flags are checked
as its configuration section checks them, so ``CallCap(-1)`` or ``WindowBreaker(0)``, which
would deny every call, is a ``ConfigError`` when the guard is built, as a file saying the same is.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import Any

from ..checks import MAX_WINDOW
from ..config import CircuitBreakerConfig, LoopBrakeConfig, ToolRule
from ..errors import ConfigError
from .cap import CallCap
from .duplicate import WindowBreaker
from .near_duplicate import NearDuplicateBreaker
from .repeat import RepeatBreaker

__all__ = ["checked_as_configured"]

# The breakers whose section has keys of other names (or is shared), and those names. The
# window is the largest allowed: the guard's own window is not the breaker's to say.
_SECTIONS: dict[type[Any], tuple[type[Any], dict[str, str], dict[str, Any]]] = {
    CallCap: (CircuitBreakerConfig, {"limit": "max_calls_per_agent"}, {"window": MAX_WINDOW}),
    WindowBreaker: (CircuitBreakerConfig, {"limit": "duplicate_limit"}, {"window": MAX_WINDOW}),
    RepeatBreaker: (LoopBrakeConfig, {}, {}),
}
# Per-tool limits: the ``[tools.<name>]`` key each breaker's ``tool_limits`` stands for.
_TOOL_KEYS = {WindowBreaker: "duplicate_limit", NearDuplicateBreaker: "near_duplicate_limit"}


def checked_as_configured(breaker: Any, index: int) -> None:
    """Raise a ``ConfigError`` naming ``breakers[index]`` when a setting of ``breaker`` is one
    its section would refuse."""
    try:
        _section(breaker)
        _tool_limits(breaker)
    except ConfigError as exc:
        renamed = _SECTIONS.get(type(breaker), (None, {}, {}))[1]
        spelled = "".join(f" (its {attr} is {key})" for attr, key in renamed.items())
        raise ConfigError(f"breakers[{index}]: {type(breaker).__name__}{spelled}: {exc}") from None


def _section(breaker: Any) -> None:
    """The breaker's section, built from its int and bool settings: its checks run."""
    cls = type(breaker)
    section, renamed, fixed = _SECTIONS.get(cls) or (cls.config_type, {}, {})
    settings = {renamed.get(name, name): getattr(breaker, name) for name in _settings(cls)}
    section(**settings, **fixed)


def _settings(cls: type[Any]) -> list[str]:
    """The ``int`` and ``bool`` parameters of ``cls``'s constructor, kept under their names."""
    parameters = list(inspect.signature(cls.__init__).parameters.values())[1:]
    return [p.name for p in parameters if p.annotation in ("int", "bool")]


def _tool_limits(breaker: Any) -> None:
    key, limits = _TOOL_KEYS.get(type(breaker)), getattr(breaker, "tool_limits", None)
    if key is None or not isinstance(limits, Mapping):
        return
    for tool, limit in limits.items():
        ToolRule(tool=str(tool), **{key: limit})
