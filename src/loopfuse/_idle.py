"""Forgetting agents that went idle: a bounded sweep of a least-recently-seen table."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

__all__ = ["drop_idle"]

_SWEEP = 64


def drop_idle(table: OrderedDict[Any, Any], now: float, idle: float) -> None:
    """Drop at most 64 of ``table``'s least recently seen entries (each value has ``seen``)
    idle longer than ``idle`` seconds. The caller has just seen one entry, so the table is
    never empty and its newest entry is never dropped."""
    for _ in range(_SWEEP):
        if now - next(iter(table.values())).seen <= idle:
            return
        table.popitem(last=False)
