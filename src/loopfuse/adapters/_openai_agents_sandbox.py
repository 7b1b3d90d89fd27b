"""OpenAI Agents SDK: the tools a ``SandboxAgent``'s capabilities build for each run.

The SDK builds them afresh for every run, on a copy of the agent, so ``guard_agent`` cannot
reach them itself. A capability that takes a ``configure_tools`` callback (``Shell``,
``Filesystem``) hands each run's tools to it: the guard's callback runs yours, then attaches
to the tools it leaves. A capability with tools of its own and no such callback is named in a
warning.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from ..incidents import logger

__all__ = ["guard_capabilities"]


def guard_capabilities(agent: Any, attach: Callable[[Any], None], owner: object) -> None:
    """Have ``attach`` run on each tool ``agent``'s capabilities build, once per ``owner``."""
    for capability in list(getattr(agent, "capabilities", None) or []):
        if "configure_tools" in getattr(type(capability), "model_fields", {}):
            _chain(capability, attach, owner)
        elif _builds_tools(capability):
            logger.warning(
                "loopfuse: the tools of capability %s of agent %r are not guarded: the SDK builds "
                "them for each run and the capability takes no configure_tools callback",
                type(capability).__name__,
                getattr(agent, "name", "?"),
            )


def _chain(capability: Any, attach: Callable[[Any], None], owner: object) -> None:
    yours = capability.configure_tools
    if isinstance(yours, _Attaching) and yours.owner is owner:
        return
    capability.configure_tools = _Attaching(attach, owner, yours)


class _Attaching:
    """A ``configure_tools`` callback: yours, then ``attach`` on every tool of the toolset. The
    SDK copies each capability for a run, its callback with it: copies are this same object."""

    __slots__ = ("attach", "owner", "yours")

    def __init__(
        self, attach: Callable[[Any], None], owner: object, yours: Callable[[Any], None] | None
    ) -> None:
        self.attach, self.owner, self.yours = attach, owner, yours

    def __call__(self, toolset: Any) -> None:
        if self.yours is not None:
            self.yours(toolset)
        for field in dataclasses.fields(toolset):
            tool = getattr(toolset, field.name)
            if hasattr(tool, "tool_input_guardrails"):
                self.attach(tool)

    def __copy__(self) -> _Attaching:
        return self

    def __deepcopy__(self, memo: Any) -> _Attaching:
        return self


def _builds_tools(capability: Any) -> bool:
    """Whether the capability's class overrides the base class's ``tools`` (which has none)."""
    from agents.sandbox.capabilities import Capability

    return getattr(type(capability), "tools", None) is not Capability.tools
