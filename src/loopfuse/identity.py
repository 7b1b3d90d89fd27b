"""How the guard identifies a call: per-tool rules, ignored arguments, near-duplicate keys."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .calls import CallKey, canonical_json, strip_ignored
from .config import GuardConfig, ToolRule
from .volatile import int_digest, mask_value

__all__ = ["CallIdentity"]

_NEAR_MAX_CHARS = 65_536
_NO_RULE = ToolRule()


class CallIdentity:
    """Turns ``(tool, args)`` into a ``CallKey`` following the configuration.

    A tool's ``identity_args`` keep only those top-level arguments; its ``ignore_args``
    add to the global ones. The near-duplicate key (when that breaker is on) masks the
    configured volatile values; arguments longer than 64 KiB get none (fail open).
    """

    def __init__(self, config: GuardConfig) -> None:
        cb, nd = config.circuit_breaker, config.near_duplicate
        self._rules = dict(config.tools)
        self._ignore = frozenset(cb.ignore_args)
        self._near = nd.enabled
        self._masks = frozenset(nd.masks)
        self._volatile = frozenset(nd.volatile_keys)

    def exempt(self, tool: str) -> bool:
        rule = self._rules.get(tool)
        return rule is not None and rule.exempt

    def key(self, tool: str, args: Any) -> CallKey | None:
        """The call's key, or None when its arguments cannot be serialized."""
        rule = self._rules.get(tool, _NO_RULE)
        args = _only(args, rule.identity_args)
        ignore = self._ignore.union(rule.ignore_args) if rule.ignore_args else self._ignore
        call = CallKey.of(tool, args, ignore)
        if call is not None and self._near:
            call.near = self._near_key(tool, strip_ignored(args, ignore), rule)
        return call

    def _near_key(self, tool: str, args: Any, rule: ToolRule) -> int:
        masks = self._masks if rule.masks is None else frozenset(rule.masks)
        volatile = self._volatile.union(rule.volatile_keys)
        try:
            if _size(args, _NEAR_MAX_CHARS) > _NEAR_MAX_CHARS:
                return 0
            text = canonical_json(mask_value(args, masks, volatile))
        except (TypeError, ValueError, RecursionError):
            return 0
        return int_digest(tool + "\n" + text)


def _only(args: Any, names: tuple[str, ...] | None) -> Any:
    if names is None or not isinstance(args, Mapping):
        return args
    return {k: v for k, v in args.items() if k in names}


def _size(value: Any, budget: int) -> int:
    """About how many characters ``value`` holds, counting stopped past ``budget``."""
    if isinstance(value, str):
        return len(value)
    if isinstance(value, Mapping):
        value = [*value.keys(), *value.values()]
    if not isinstance(value, list | tuple):
        return 8
    total = 0
    for item in value:
        total += _size(item, budget - total)
        if total > budget:
            break
    return total
