"""A thought between repeats of a call is never something new, on both stores: the model's note
is not a finding that makes the next repeat a re-run checking it."""

from __future__ import annotations

import json

import pytest

from tests.store_fixtures import GuardFactory

from .conftest import run

ACTION = ("bash", {"command": "python -c 'import app; print(app.main())'"}, "dev")
THOUGHTS = [
    "I need to check the config for APP_ENV before running again.",
    "Let me check the config to see APP_ENV before rerunning.",
]


def _sequential(n: int) -> tuple[str, dict[str, object], str]:
    args = {"thought": THOUGHTS[n % 2], "thoughtNumber": n, "totalThoughts": n + 2, "nextThoughtNeeded": True}
    answer = json.dumps({"thoughtNumber": n, "totalThoughts": n + 2, "thoughtHistoryLength": n})
    return "mcp__sequential-thinking__sequentialthinking", args, answer


def _think(n: int) -> tuple[str, dict[str, object], str]:
    return "reflect", {"thought": f"{THOUGHTS[n % 2]} (take {'abcdefgh'[n % 8]})"}, f"Noted: thought {n}."


@pytest.mark.parametrize("thought", [_sequential, _think])
def test_the_same_action_between_thoughts_is_refused(make_guard: GuardFactory, thought: object) -> None:
    """Each thought answered something new, so every repeat of the action was excused: never refused."""
    guard, ran = make_guard(), 0
    for n in range(40):
        assert callable(thought)
        run(guard, *thought(n), ok=True)
        if not run(guard, *ACTION, ok=True):
            break
        ran += 1
    assert ran == 7  # result_limit 7: the 8th identical action with the same result is refused


@pytest.mark.parametrize("thought", [_sequential, _think])
def test_a_thought_between_denials_keeps_them_in_a_row(make_guard: GuardFactory, thought: object) -> None:
    """A model that thinks between refused repeats was never stopped: each allowed thought
    started its denials in a row again, so the run went on, half refused, to the cap."""
    guard, flags = make_guard(), []
    for n in range(40):
        assert callable(thought)
        run(guard, *thought(n), ok=True)
        decision = guard.check(ACTION[0], ACTION[1], "a")
        if decision.allowed:
            guard.record_result(ACTION[0], ACTION[1], ACTION[2], "a", ok=True)
        else:
            flags.append(decision.escalate)
    assert flags[:4] == [False, False, True, True]  # abort_after_denials 3, thoughts between
