"""Anchor rules: what other agent hosts stop loops with, from their public descriptions,
as detectors scored exactly like a guard configuration.

A rule that judges a call by its result (it has to run first) stops the agent after it:
the agent's next call is the first one prevented.
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Callable, Sequence

from ..._calls import canonical_json
from ..transcripts.model import ToolCall
from ._scoring import Detector

__all__ = [
    "anchors",
    "baselines",
    "identical_failures",
    "identical_in_a_row",
    "identical_pairs",
    "repeated_in_window",
]


def identical_in_a_row(limit: int) -> Detector:
    """Baseline: deny the ``limit``-th identical call in a row (per agent)."""

    def first(calls: Sequence[ToolCall]) -> int | None:
        return _per_agent(calls, lambda c: (c.tool, canonical_json(c.args)), limit, stop_after=False)

    return first


def identical_pairs(limit: int) -> Detector:
    """Baseline: stop an agent once its last ``limit`` (action, observation) pairs are
    identical; its next call is the first one prevented."""

    def first(calls: Sequence[ToolCall]) -> int | None:
        return _per_agent(
            calls, lambda c: (c.tool, canonical_json(c.args), c.result, c.ok), limit, stop_after=True
        )

    return first


def _per_agent(
    calls: Sequence[ToolCall], identity: Callable[[ToolCall], object], limit: int, *, stop_after: bool
) -> int | None:
    streaks: dict[str, tuple[object, int]] = {}
    stopped: set[str] = set()
    for call in calls:
        if call.agent in stopped:
            return call.step
        previous, streak = streaks.get(call.agent, (None, 0))
        key = identity(call)
        streak = streak + 1 if key == previous else 1
        streaks[call.agent] = (key, streak)
        if streak >= limit:
            if not stop_after:
                return call.step
            stopped.add(call.agent)
    return None


def repeated_in_window(more_than: int, window: int) -> Detector:
    """Crush: stop an agent once the same tool name, input and output occur more than
    ``more_than`` times among its last ``window`` calls."""

    def first(calls: Sequence[ToolCall]) -> int | None:
        recent: dict[str, deque[object]] = {}
        stopped: set[str] = set()
        for call in calls:
            if call.agent in stopped:
                return call.step
            seen = recent.setdefault(call.agent, deque(maxlen=window))
            seen.append((call.tool, canonical_json(call.args), call.result))
            if Counter(seen).most_common(1)[0][1] > more_than:
                stopped.add(call.agent)
        return None

    return first


def identical_failures(limit: int) -> Detector:
    """Hermes Agent: stop an agent once the same call (tool and input) has failed with the
    same error ``limit`` times in the run."""

    def first(calls: Sequence[ToolCall]) -> int | None:
        failures: Counter[tuple[str, str, str, str | None]] = Counter()
        stopped: set[str] = set()
        for call in calls:
            if call.agent in stopped:
                return call.step
            if call.ok is False:
                key = (call.agent, call.tool, canonical_json(call.args), call.result)
                failures[key] += 1
                if failures[key] >= limit:
                    stopped.add(call.agent)
        return None

    return first


def baselines() -> list[tuple[str, Detector]]:
    """The three baselines of the first evaluation, from their public descriptions."""
    return [
        ("baseline: 5th identical in a row", identical_in_a_row(5)),
        ("baseline: 4th identical in a row", identical_in_a_row(4)),
        ("baseline: 4 identical action+result", identical_pairs(4)),
    ]


def anchors() -> list[tuple[str, Detector]]:
    """The anchor rules: the three baselines (named by the host they come from) and two more."""
    return [
        ("Gemini CLI: 5th identical in a row", identical_in_a_row(5)),
        ("Roo Code: 4th identical in a row", identical_in_a_row(4)),
        ("OpenHands: 4 identical action+obs", identical_pairs(4)),
        ("Crush: same call+output >5 in 10", repeated_in_window(5, 10)),
        ("Hermes: same call fails same x5", identical_failures(5)),
    ]
