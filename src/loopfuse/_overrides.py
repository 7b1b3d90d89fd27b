"""Escape hatches a host sets by hand: a paused agent, a one-time allowance for one call.

Both live in the guard's process (a Redis store shares no override). An agent that cannot
be hashed cannot be paused or allowed: its calls are judged as usual.
"""

from __future__ import annotations

import contextlib
import weakref
from collections import Counter
from collections.abc import Iterator
from typing import Any

from ._agents import agent_label
from ._fork import fork_safe_lock
from ._guard_events import log_name
from .errors import ConfigError
from .incidents import logger

__all__ = ["Overrides", "allow_next_logged", "paused_logged"]

_MAX_ALLOWANCES = 4_096


def _token(agent: Any) -> Any:
    """A hashable stand-in for ``agent``, or None when it has none (hashing raised)."""
    try:
        hash(agent)
    except Exception:
        return None
    return agent


def _weak_token(agent: Any) -> Any:
    """``_token``, as a weak reference for an object that takes one: an allowance never keeps
    an agent object (and so its state) alive. Equal while the object lives, as it is."""
    token = _token(agent)
    if token is None or isinstance(token, str):
        return token
    try:
        return weakref.ref(token)
    except TypeError:  # an int, a tuple: nothing to keep alive
        return token


class Overrides:
    """Paused agents (counted, so nested pauses nest) and one-time allowances per agent and tool."""

    def __init__(self) -> None:
        self._lock = fork_safe_lock()
        self.paused: Counter[Any] = Counter()
        self.allowances: Counter[tuple[Any, str]] = Counter()

    def pause(self, agent: Any) -> Any:
        """Pause ``agent``; the token to ``resume`` it with, None when it cannot be paused."""
        token = _token(agent)
        if token is None:
            return None
        try:
            with self._lock:
                self.paused[token] += 1
        except Exception:  # an __eq__ that raises
            return None
        return token

    def resume(self, token: Any) -> None:
        with self._lock:
            self.paused[token] -= 1
            if self.paused[token] <= 0:
                del self.paused[token]

    def allow_next(self, agent: Any, tool: str, times: int) -> bool:
        """Allow ``agent``'s next ``times`` calls of ``tool`` (past 4,096 allowances never used,
        the oldest goes); False when ``agent`` cannot be hashed."""
        token = _weak_token(agent)
        if token is None:
            return False
        try:
            with self._lock:
                self._drop_dead()
                self.allowances[(token, tool)] += times
                if len(self.allowances) > _MAX_ALLOWANCES:
                    del self.allowances[next(iter(self.allowances))]
        except Exception:  # an __eq__ or a tool name that raises
            return False
        return True

    def _drop_dead(self) -> None:
        """Forget the allowances of agent objects gone (under the lock)."""
        for key in [k for k in self.allowances if type(k[0]) is weakref.ref and k[0]() is None]:
            del self.allowances[key]

    def forget(self, agent: Any) -> None:
        """Drop ``agent``'s allowances (an agent that finished keeps none)."""
        token = _weak_token(agent) if self.allowances else None
        if token is None:
            return
        with contextlib.suppress(Exception), self._lock:  # an __eq__ that raises: kept
            for key in [key for key in self.allowances if key[0] is token or key[0] == token]:
                del self.allowances[key]

    def take(self, agent: Any, tool: Any) -> str | None:
        """Why this call skips the breakers ("paused", "allow_next"), using up an allowance; None if it does not."""
        token = _token(agent)
        if token is None:
            return None
        try:
            return self._take(token, _weak_token(agent) if self.allowances else token, tool)
        except Exception:  # an __eq__ or a tool name that raises: judged as usual
            return None

    def _take(self, token: Any, weak: Any, tool: Any) -> str | None:
        with self._lock:
            if token in self.paused:
                return "paused"
            key = (weak, tool)
            if self.allowances.get(key, 0) <= 0:
                return None
            self.allowances[key] -= 1
            if not self.allowances[key]:
                del self.allowances[key]
        return "allow_next"


@contextlib.contextmanager
def paused_logged(overrides: Overrides, agent: Any) -> Iterator[None]:
    """``agent`` paused within the block, logged when it starts and ends."""
    token = overrides.pause(agent)
    label = log_name(agent_label(agent))
    if token is None:
        logger.warning("loopfuse: agent %s cannot be paused (not hashable); its calls are judged", label)
        yield
        return
    logger.warning("loopfuse: agent %s paused: its calls are allowed unjudged", label)
    try:
        yield
    finally:
        overrides.resume(token)
        logger.warning("loopfuse: agent %s resumed", label)


def allow_next_logged(overrides: Overrides, agent: Any, tool: str, times: int) -> None:
    """The next ``times`` calls of ``tool`` by ``agent`` allowed, logged; ``ConfigError`` when
    ``times`` is not an integer >= 1."""
    if isinstance(times, bool) or not isinstance(times, int) or times < 1:
        raise ConfigError(f"allow_next times = {times!r} is not allowed: expected an integer >= 1")
    label = log_name(agent_label(agent))
    if overrides.allow_next(agent, tool, times):
        logger.warning("loopfuse: the next %d %s call(s) of agent %s are allowed", times, tool, label)
    else:
        logger.warning(
            "loopfuse: agent %s cannot be allowed a call (not hashable); its calls are judged", label
        )
