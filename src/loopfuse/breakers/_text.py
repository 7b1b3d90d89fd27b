"""Phrases shared by the breakers' denial texts (each breaker owns its sentences)."""

from __future__ import annotations

__all__ = ["CHANGE", "FIX", "NEW", "REFUSED", "STOP"]

CHANGE = (
    "Stop repeating it: change your approach, or report to the user what you found and what is blocking you."
)
FIX = "Fix the cause or change your approach, or report to the user what you found and what is blocking you."
REFUSED = "loopfuse refused this {tool} call: "
STOP = "Stop calling tools and report to the user what you found so far: every further tool call will be refused."
NEW = "running it again will not tell you anything new. "
