"""Breakers: pure decisions over one agent's state, no I/O.

Each breaker answers ``check(state, call)`` with a ``Denial`` or ``None`` without
changing anything, ``record(state, call)`` once the guard has allowed the call,
``refused(state, call)`` when it was the breaker that denied it, and
``observe(state, call, result)`` when the host reports what an allowed call returned
(``Guard.record_result``). The guard evaluates them in order; the first denial wins
and then no breaker records the call. A breaker whose ``record`` does nothing says so
with ``records = False``, and the in-process store skips it on every allowed call. A
breaker that can neither deny nor record anything until the agent's first reported result
says so with ``awaits_results = True``, and the store skips it for agents without one.
"""

from __future__ import annotations

from typing import Protocol

from .._calls import CallKey
from .._state import AgentState, ToolResult
from ..decision import Denial, Kind
from .cap import CallCap
from .cycle import CycleBreaker
from .duplicate import WindowBreaker
from .failures import FailuresBreaker
from .near_duplicate import NearDuplicateBreaker
from .repeat import RepeatBreaker
from .same_error import SameErrorBreaker
from .stall import StallBreaker

__all__ = [
    "AgentState",
    "Breaker",
    "CallCap",
    "CallKey",
    "CycleBreaker",
    "FailuresBreaker",
    "NearDuplicateBreaker",
    "RepeatBreaker",
    "SameErrorBreaker",
    "StallBreaker",
    "ToolResult",
    "WindowBreaker",
]


class Breaker(Protocol):
    """What the guard needs of a breaker; ``kind`` names it in decisions and incidents
    (a custom breaker may use its own name)."""

    @property
    def kind(self) -> Kind | str: ...  # read-only here: a class attribute satisfies it

    def check(self, state: AgentState, call: CallKey) -> Denial | None: ...

    def record(self, state: AgentState, call: CallKey) -> None: ...

    def refused(self, state: AgentState, call: CallKey) -> None: ...

    def observe(self, state: AgentState, call: CallKey, result: ToolResult) -> None: ...
