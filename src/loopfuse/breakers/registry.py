"""Every breaker loopfuse has, by kind, in the guard's order of evaluation.

A breaker is one unit. Its module holds the class (pure ``check``, ``record``, ``refused`` and
``observe`` on an agent's state; ``from_config``; its sentences in ``MESSAGES``; its settings
for the Redis script in ``lua_settings`` and the rule a script's denial names in
``script_rule``), its configuration section (``config_type``, parsed as ``[<section>]``) and,
for the state only it reads, a small slotted class kept in ``AgentState.unit(kind, ...)``. A
breaker whose ``lua`` is ``"fragment"`` brings ``stores/lua/breakers/<kind>.lua``, which the
Redis store appends to its scripts. Adding a breaker is its module, its Lua fragment and
one line here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from . import Breaker
from .cap import CallCap
from .cycle import CycleBreaker
from .duplicate import WindowBreaker
from .failures import FailuresBreaker
from .near_duplicate import NearDuplicateBreaker
from .repeat import RepeatBreaker
from .same_error import SameErrorBreaker
from .stall import StallBreaker

if TYPE_CHECKING:
    from ..config import GuardConfig

__all__ = ["REGISTRY", "BreakerUnit", "rule_messages", "unit_sections"]


class BreakerUnit(Breaker, Protocol):
    """A breaker the registry builds from a configuration and the Redis store can run."""

    section: ClassVar[str]
    config_type: ClassVar[type | None]
    lua: ClassVar[str]  # "fragment": stores/lua/breakers/<kind>.lua, run by the Redis scripts
    MESSAGES: ClassVar[dict[str, str]]

    @classmethod
    def from_config(cls, config: GuardConfig) -> Breaker | None: ...

    def allowed_repeats(self) -> int | None: ...

    def lua_settings(self) -> tuple[int, ...]: ...

    def script_rule(self, code: str, tool: str) -> str: ...


REGISTRY: dict[str, type[Any]] = {
    "cap": CallCap,
    "duplicate": WindowBreaker,
    "repeat": RepeatBreaker,
    "same_error": SameErrorBreaker,
    "stall": StallBreaker,
    "near_duplicate": NearDuplicateBreaker,
    "cycle": CycleBreaker,
    "failures": FailuresBreaker,
}


def unit_sections() -> dict[str, type[Any]]:
    """The configuration section each breaker module owns, by section name."""
    return {cls.section: cls.config_type for cls in REGISTRY.values() if cls.config_type is not None}


def rule_messages() -> dict[str, str]:
    """Every breaker's sentence per rule (``Denial.rule``), in the registry's order."""
    return {rule: text for cls in REGISTRY.values() for rule, text in cls.MESSAGES.items()}
