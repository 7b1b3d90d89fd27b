"""What stands for a run of the OpenAI Agents SDK, which has no run id: the invocation of an
agent used as a tool a call is in, else a token on the run's usage object."""

from __future__ import annotations

import contextvars
import threading
from typing import Any

__all__ = ["INVOCATION", "Invocation", "run_of"]


class Invocation:
    """One invocation of an agent used as a tool: the run it makes (its scopes' owner)."""

    __slots__ = ("__weakref__",)


INVOCATION: contextvars.ContextVar[Invocation | None] = contextvars.ContextVar(
    "loopfuse_invocation", default=None
)


def run_of(usage: Any) -> Any:
    """What stands for the run making a call: the agent tool's invocation it is in, else the
    token its usage object holds."""
    return INVOCATION.get() or _RunToken.of(usage)


class _RunToken:
    """Stands for the run whose usage object holds it. The SDK interrupts a run for an approval
    with a deep copy of its usage (``RunState``) and resumes it from that: the copy holds the
    same token, so the resumed run keeps its counts."""

    __slots__ = ("__weakref__",)

    def __copy__(self) -> _RunToken:
        return self

    def __deepcopy__(self, memo: Any) -> _RunToken:
        return self

    @classmethod
    def of(cls, usage: Any) -> Any:
        """The token ``usage`` holds, given it now if it has none; ``usage`` itself if it cannot."""
        with _TOKENS:
            try:
                token = getattr(usage, _TOKEN, None)
                if type(token) is not cls:
                    token = cls()
                    setattr(usage, _TOKEN, token)
            except Exception:  # a usage object that takes no attribute: it stands for its run
                return usage
            return token


_TOKEN = "_loopfuse_run"
_TOKENS = threading.Lock()
