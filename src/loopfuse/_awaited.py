"""Which allowed call a reported result belongs to, when the host passes the same arguments
object it checked: the call's key is kept, so ``record_result`` needs no second serialization
and sees the call as it was checked even if the tool changed its arguments."""

from __future__ import annotations

from typing import Any

from ._calls import CallKey
from ._fork import fork_safe_lock

__all__ = ["AwaitedCalls"]

_AWAITING = 16  # allowed calls whose results are awaited (parallel calls of one turn)


class AwaitedCalls:
    """The keys of the last allowed calls by the identity of their arguments object; kept only
    once a result was reported (a guard that never receives results keeps nothing)."""

    __slots__ = ("_calls", "_lock", "active")

    def __init__(self) -> None:
        self._calls: dict[int, tuple[Any, str, CallKey]] | None = None
        self._lock = fork_safe_lock()  # checks of several threads keep keys at once
        self.active = False  # a result was reported: keys are kept from now on

    def keep(self, args: Any, call: CallKey) -> None:
        calls = self._calls
        if calls is not None and args is not None:
            with self._lock:
                calls[id(args)] = (args, call.tool, call)
                if len(calls) > _AWAITING:
                    del calls[next(iter(calls))]

    def take(self, tool: Any, args: Any) -> CallKey | None:
        """The key ``tool`` was checked with for this very ``args`` object, else None."""
        calls = self._calls
        if calls is None:
            self._calls, self.active = {}, True
            return None
        entry = calls.pop(id(args), None)
        if entry is None or entry[0] is not args or type(tool) is not str or entry[1] != tool:
            return None
        return entry[2]
