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
    configured volatile values, but keeps the values of keys that name an item (``id``,
    ``order_id``, ``docId``, ``uuid``: see ``_names_item``); arguments longer than 2 KiB get
    none (fail open). A ``batch`` tool's near-duplicate key is its exact key.
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
        text, items = call.text, ""
        volatile_there = volatile and _key_pattern(volatile).search(text) is not None
        if volatile_there or _may_name_item(text):
            try:
                kept: list[Any] = []
                text = canonical_json(_blank_keys(json.loads(text), volatile, kept))
                items = "\n" + canonical_json(kept) if kept else ""
            except RecursionError:
                return 0
        return int_digest(call.tool + "\n" + mask_text(text, masks) + items)


@functools.cache
def _key_pattern(keys: frozenset[str]) -> re.Pattern[str]:
    """Any of ``keys`` as an object key in canonical JSON (``"key":``)."""
    return re.compile("|".join(re.escape(canonical_json(key) + ":") for key in sorted(keys)))


# A key that may name an item, as canonical JSON writes it ("order_id":, "docId":, "uuid":,
# a notebook's "cell_index":), or the day a call asks about ("date":, "departureDate":, a
# calendar's "timeMin":): the cheap test that decides whether the arguments are parsed for
# ``_names_item``.
_ITEM_KEY = re.compile(
    r'(?:["_](?:id|ids|uid|uids|uuid|key|sku)|_number|"(?:ID|Id|UUID|Uuid|Key|SKU)|[a-z0-9](?:Id|Ids|ID|IDs|Uuid|Number|Key)'
    r'|cell_index|cellIndex|["_](?:date|day)|[a-z0-9](?:Date|Day)|"(?:DATE|Date|Day|timeMin|timeMax|time_min|time_max))":'
)
_ITEM_NAME = re.compile(
    r"(?:^|_)(?:id|ids|uid|uids|uuid|key|sku)$|_number$|(?<=[a-z0-9])(?:Id|Ids|ID|IDs|Uuid|Number|Key)$"
    r"|^(?:ID|Id|UUID|Uuid|Key|SKU)$|(?:^|_)cell_index$|(?:^|[a-z0-9])cellIndex$"
)
# A key naming the day a call asks about, and a value that is a day: a date, or midnight (a
# calendar's day starts there). A time of day under it is "now", fresh on every attempt: masked.
_DAY_NAME = re.compile(
    r"(?:^|_)(?:date|day)$|(?<=[a-z0-9])(?:Date|Day)$|^(?:DATE|Date|Day|timeMin|timeMax|time_min|time_max)$"
)
_DAY = re.compile(r"\d{4}-\d{2}-\d{2}(?:[T ]00:00(?::00(?:\.0+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?", re.ASCII)
# A key naming a position in a list by an item's id ("after_id", "sinceId", "max_id"): a cursor;
# a number that counts pages, lines or attempts ("page_number", "retryNumber"); a key that is a
# secret or a one-time token ("api_key", "idempotency_key"); an id of the request, not of an item
# ("client_request_id", "tool_call_id", "parentSpanId"), which may be fresh on every attempt; but
# "pull_request_id" and "merge_request_id" name items, and "call_id" a call record.
_POSITION = re.compile(
    r"(?:after|before|since|until|max|min|last|next|prev|previous)(?:_|[A-Z])"
    r"|(?:page|line|row|col|column|offset|start|end|step|attempt|retry|try|round|iteration|version)"
    r"(?:_n|N)umber$"
    r"|(?:api|sort|cache|secret|access|private|public|encryption|signing|idempotency|dedup|session)"
    r"(?:_k|K)ey$"
    r"|(?:client_|x_)?request_id$|(?:tool|function)_call_id$|(?:parent_)?span_id$|(?:trace|correlation)_id$"
    r"|(?:client|x)RequestId$|requestId$|(?:tool|function)CallId$|(?:parent)?[sS]panId$|(?:trace|correlation)Id$"
)


def _may_name_item(text: str) -> bool:
    """Whether canonical JSON ``text`` has a key that may name an item: every such key ends in
    ``d``, ``D``, ``ds``, ``Ds``, ``ey``, ``er``, ``ku``, ``KU``, ``ndex``, ``te``, ``TE``,
    ``ay``, ``in`` or ``ax``, which searches in C rule out (the regex alone, having no literal to
    skip to, costs eight times as much on the usual call)."""
    if 'd":' in text or 'D":' in text or 'ds":' in text or 'Ds":' in text or 'ey":' in text:
        return _ITEM_KEY.search(text) is not None
    if 'er":' in text or 'ku":' in text or 'KU":' in text or 'ndex":' in text:
        return _ITEM_KEY.search(text) is not None
    if 'te":' in text or 'TE":' in text or 'ay":' in text or 'in":' in text or 'ax":' in text:
        return _ITEM_KEY.search(text) is not None
    return False


def _names_item(key: str) -> bool:
    """Whether ``key`` names the item a call acts on: ``id``, ``order_id``, ``docId``,
    ``message_ids``, ``uuid``; not a position (``after_id``, ``sinceId``)."""
    return _ITEM_NAME.search(key) is not None and _POSITION.match(key) is None


def _names_day(key: str, value: Any) -> bool:
    """Whether ``key`` names the day a call asks about and ``value`` is one (``date``,
    ``departureDate``, a calendar's ``timeMin``: ``2025-04-19``, ``2025-04-19T00:00:00Z``)."""
    if _DAY_NAME.search(key) is None or _POSITION.match(key) is not None:
        return False
    return type(value) is str and _DAY.fullmatch(value) is not None


def _blank_keys(value: Any, keys: frozenset[str], items: list[Any]) -> Any:
    """``value`` with the values of ``keys`` replaced by a placeholder at any depth, and the
    values of keys naming an item moved to ``items`` (kept exact, not masked)."""
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            if k in keys:
                out[k] = "#"
            elif _names_item(k) or _names_day(k, v):
                items.append(v)
                out[k] = "#"
            else:
                out[k] = _blank_keys(v, keys, items)
        return out
    if isinstance(value, list):
        return [_blank_keys(v, keys, items) for v in value]
    return value


def _only(args: Any, names: tuple[str, ...] | None) -> Any:
    if names is None or not isinstance(args, Mapping):
        return args
    return {k: v for k, v in args.items() if k in names}
