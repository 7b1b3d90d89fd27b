"""Incidents: what happens after a denial, outside the tool call.

The guard appends the first denial per agent per kind to the incident log
(:class:`IncidentLog`); :class:`IncidentReader` follows that file as it grows, rotates or is
truncated; a :class:`Supervisor` acts on it (interrupt, re-dispatch once, give up).
"""

from __future__ import annotations

from ._log import IncidentLog, incident_record
from ._log import logger as logger  # the runtime logs through it: ``from .incidents import logger``
from ._reader import IncidentReader
from ._supervisor import Action, Gap, Supervisor, SupervisorPolicy, Trip

__all__ = [
    "Action",
    "Gap",
    "IncidentLog",
    "IncidentReader",
    "Supervisor",
    "SupervisorPolicy",
    "Trip",
    "incident_record",
]
