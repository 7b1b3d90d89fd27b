"""Pure breaker tests: a breaker's decisions on an agent's state built directly, no guard, no store.

``make_state`` is to a breaker what tenacity's ``make_retry_state`` is to a stop strategy: the
state as the in-process store keeps it, with any slot set by keyword. ``decide`` plays the
store's part for one breaker: check, and on an allowed call count it and let the breaker record it.
"""

from __future__ import annotations

from typing import Any

from loopfuse._calls import CallKey
from loopfuse._state import AgentState
from loopfuse.breakers import Breaker
from loopfuse.decision import Denial

__all__ = ["call", "decide", "make_state"]


def make_state(window: int = 200, **slots: Any) -> AgentState:
    """A fresh agent state with a window of ``window`` calls and ``slots`` set as given."""
    state = AgentState(window)
    for name, value in slots.items():
        setattr(state, name, value)
    return state


def call(tool: str, args: Any = None) -> CallKey:
    """The key the guard computes for ``tool`` called with ``args``."""
    key = CallKey.of(tool, {} if args is None else args)
    assert key is not None, f"unserializable arguments: {args!r}"
    return key


def decide(breaker: Breaker, state: AgentState, key: CallKey) -> Denial | None:
    """The breaker's verdict, applied to ``state`` as the in-process store applies it."""
    denial = breaker.check(state, key)
    if denial is not None:
        breaker.refused(state, key)
        return denial
    state.calls += 1
    breaker.record(state, key)
    return None
