"""How the guard identifies a call: per-tool rules, ignored arguments, near-duplicate keys."""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping
from typing import Any

from ._calls import CallKey, canonical_json, json_object
from ._volatile import int_digest, mask_text
from .config import GuardConfig, ToolRule

__all__ = ["CallIdentity"]

_NEAR_MAX_CHARS = 2_048
_NEAR_CACHE = 4_096
_NO_RULE = ToolRule()


class CallIdentity:
    """Turns ``(tool, args)`` into a ``CallKey`` following the configuration.

    A tool's ``identity_args`` keep only those top-level arguments; its ``ignore_args``
    add to the global ones. The near-duplicate key (when that breaker is on) masks the
    configured volatile values; arguments longer than 2 KiB get none (fail open). A ``batch``
    tool's near-duplicate key is its exact key: calls over different items never match.
    """

    def __init__(self, config: GuardConfig) -> None:
        cb, nd = config.circuit_breaker, config.near_duplicate
        self._rules = dict(config.tools)
        self._ignore = frozenset(cb.ignore_args)
        self._near = nd.enabled
        self._batch = frozenset(tool for tool, rule in self._rules.items() if rule.batch)
        self.exempt_tools = frozenset(tool for tool, rule in self._rules.items() if rule.exempt)
        self._masks = frozenset(nd.masks)
        self._volatile = frozenset(nd.volatile_keys)
        self._near_cache: dict[int, int] = {}

    def key(self, tool: str, args: Any) -> CallKey | None:
        """The call's key, or None when its arguments cannot be serialized.

        Arguments given as the text of a JSON object (a model's raw ``arguments`` string, as
        chat APIs deliver it) are judged as that object. The near-duplicate key is left for the
        breaker to compute when it needs it."""
        if type(args) is str:
            parsed = json_object(args)
            args = args if parsed is None else parsed
        rule = self._rules.get(tool) if self._rules else None
        if rule is None:
            call = CallKey.of(tool, args, self._ignore)
        else:
            ignore = self._ignore.union(rule.ignore_args) if rule.ignore_args else self._ignore
            try:
                args = _only(args, rule.identity_args)
            except Exception:  # the caller's mapping raises while read: cannot be judged
                return None
            call = CallKey.of(tool, args, ignore)
        if call is not None and self._near:
            call.near_of = self._near_key
        return call

    def _near_key(self, call: CallKey) -> int:
        """The near key of ``call``, remembered for the calls seen last (a loop repeats them)."""
        if self._batch and call.tool in self._batch:
            return call.key
        near = self._near_cache.get(call.key)
        if near is None:
            if len(self._near_cache) >= _NEAR_CACHE:
                self._near_cache.clear()
            near = self._near_cache[call.key] = self._compute_near(call)
        return near

    def _compute_near(self, call: CallKey) -> int:
        """The call's canonical JSON with volatile values masked, hashed; 0 past 2 KiB
        (masking costs time in proportion to the text; exact repeats are still caught), and 0
        for arguments nested too deep to blank their volatile keys (the breakers record the
        call before this runs: raising here would leave it half recorded)."""
        if len(call.text) > _NEAR_MAX_CHARS:
            return 0
        rule = self._rules.get(call.tool, _NO_RULE)
        masks = self._masks if rule.masks is None else frozenset(rule.masks)
        volatile = self._volatile.union(rule.volatile_keys) if rule.volatile_keys else self._volatile
        text = call.text
        if volatile and _key_pattern(volatile).search(text) is not None:  # a volatile key is there
            try:
                text = canonical_json(_blank_keys(json.loads(text), volatile))
            except RecursionError:
                return 0
        return int_digest(call.tool + "\n" + mask_text(text, masks))


@functools.cache
def _key_pattern(keys: frozenset[str]) -> re.Pattern[str]:
    """Any of ``keys`` as an object key in canonical JSON (``"key":``)."""
    return re.compile("|".join(re.escape(canonical_json(key) + ":") for key in sorted(keys)))


def _blank_keys(value: Any, keys: frozenset[str]) -> Any:
    """``value`` with the values of ``keys`` replaced by a placeholder at any depth."""
    if isinstance(value, dict):
        return {k: "#" if k in keys else _blank_keys(v, keys) for k, v in value.items()}
    if isinstance(value, list):
        return [_blank_keys(v, keys) for v in value]
    return value


def _only(args: Any, names: tuple[str, ...] | None) -> Any:
    if names is None or not isinstance(args, Mapping):
        return args
    return {k: v for k, v in args.items() if k in names}
