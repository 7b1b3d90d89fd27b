"""The Lua scripts of the Redis store, bound to a guard's breakers, and the arguments they take.

Lua numbers in Redis are doubles, so everything that needs 63-bit arithmetic (pair keys of a
call and its result, digests) is computed here and sent as bytes; the scripts only compare.
"""

from __future__ import annotations

from importlib import resources
from typing import Any

from ..breakers import Breaker, WindowBreaker
from ..calls import CallKey
from ..errors import ConfigError
from ..state import ToolResult
from ..volatile import pair_key
from .base import StoreSpec

__all__ = ["SUPPORTED_KINDS", "ScriptSet", "supported_breakers"]

SUPPORTED_KINDS = ("cap", "duplicate", "repeat", "same_error")


def _source(name: str) -> str:
    return resources.files(__package__).joinpath(f"lua/{name}.lua").read_text(encoding="utf-8")


_DECIDE, _OBSERVE = _source("decide"), _source("observe")


def supported_breakers(spec: StoreSpec) -> tuple[Breaker, ...]:
    """``spec.breakers`` the Redis store evaluates; ``ConfigError`` names those it cannot.

    ``cycle`` and ``near_duplicate`` with ``only_with_results`` act only on reported results,
    which Redis does not feed them yet: they are left out (see the README), others refused.
    """
    kept = tuple(b for b in spec.breakers if not _results_only(b) or b.kind in SUPPORTED_KINDS)
    unsupported = sorted({b.kind for b in kept} - set(SUPPORTED_KINDS))
    if unsupported:
        raise ConfigError(
            f"the Redis store cannot evaluate the breaker(s) {', '.join(unsupported)}: "
            f"it implements {', '.join(SUPPORTED_KINDS)}; disable them or use store='memory://'"
        )
    return kept


def _results_only(breaker: Any) -> bool:
    """Whether ``breaker`` can only deny on the basis of reported results."""
    return breaker.kind == "same_error" or bool(getattr(breaker, "only_with_results", False))


class ScriptSet:
    """The sources of both scripts for one guard, and the arguments of each round trip."""

    def __init__(self, breakers: tuple[Breaker, ...], window: int, ttl_ms: int) -> None:
        header = f"local size, ttl, breakers = {window}, {ttl_ms}, {{{_settings(breakers)}}}\n"
        self.decide, self.observe = header + _DECIDE, header + _OBSERVE
        windows = [b for b in breakers if isinstance(b, WindowBreaker)]
        self._window = windows[0] if windows else None

    def check_args(self, call: CallKey) -> list[Any]:
        plain, with_result = self._window_limits(call.tool)
        return [call.key.to_bytes(8, "big"), call.full, _tool_id(call.tool), plain, with_result]

    def result_args(self, call: CallKey, result: ToolResult) -> list[Any]:
        return [
            call.key.to_bytes(8, "big"),
            call.full,
            _tool_id(call.tool),
            result.digest.to_bytes(8, "big"),
            pair_key(call.key, result.digest).to_bytes(8, "big"),
            b"0" if result.ok is False else b"1",
            result.error.to_bytes(8, "big"),
        ]

    def _window_limits(self, tool: str) -> tuple[int, int]:
        """The window limit for a call of ``tool`` without and with a known result."""
        window = self._window
        if window is None:
            return 0, 0
        own = window.tool_limits.get(tool)
        if own is not None:
            return own, own
        return window.limit, window.result_limit or window.limit


def _tool_id(tool: str) -> bytes:
    """The tool's name, prefixed so that no tool equals the empty "no tool" value."""
    return b"=" + tool.encode("utf-8", "surrogatepass")


def _settings(breakers: tuple[Breaker, ...]) -> str:
    return ", ".join("{" + ", ".join([f"'{b.kind}'", *map(str, _values(b))]) + "}" for b in breakers)


def _values(breaker: Any) -> list[int]:
    """The breaker's settings in the order the scripts read them (after its kind)."""
    kind = breaker.kind
    if kind == "cap":
        return [breaker.limit]
    if kind == "duplicate":
        return [int(breaker.result_aware), breaker.same_result_limit, breaker.progress_limit]
    if kind == "repeat":
        return [breaker.max_repeats, int(breaker.result_aware)]
    return [breaker.limit, breaker.identical_limit]
