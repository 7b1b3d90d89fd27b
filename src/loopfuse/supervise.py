"""Old import path, kept working: the same objects, now in ``loopfuse.incidents`` (``_supervisor``)."""

from __future__ import annotations

from .incidents._supervisor import (
    DEFAULT_GRACE,
    Action,
    ActionKind,
    Gap,
    GiveUp,
    IncidentReader,
    Interrupt,
    Redispatch,
    Supervisor,
    SupervisorPolicy,
    Trip,
    give_up_note,
    logger,
    redispatch_note,
)

__all__ = [
    "DEFAULT_GRACE",
    "Action",
    "ActionKind",
    "Gap",
    "GiveUp",
    "IncidentReader",
    "Interrupt",
    "Redispatch",
    "Supervisor",
    "SupervisorPolicy",
    "Trip",
    "give_up_note",
    "logger",
    "redispatch_note",
]
