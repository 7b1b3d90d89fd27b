"""A random number naming this process, drawn again in a child made by ``fork``: the child
inherits the parent's memory, so a number drawn once at import would name both (a Redis round
trip's id, a run's label), and one process would be answered what the other asked."""

from __future__ import annotations

import os

__all__ = ["process_number"]

_number = [int.from_bytes(os.urandom(8))]


def process_number() -> int:
    """This process's random 64-bit number."""
    return _number[0]


def _draw_again() -> None:
    _number[0] = int.from_bytes(os.urandom(8))


if hasattr(os, "register_at_fork"):  # not on Windows, which does not fork
    os.register_at_fork(after_in_child=_draw_again)
