"""A thought between repeats of a call is never something new, on both stores: the model's note
(a thought, its task list, plan or memory) is not a finding that makes the next repeat a re-run
checking it, nor a change of approach after a denial."""

from __future__ import annotations

import json

import pytest

from loopfuse import Guard
from loopfuse.breakers._rerun import is_note
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


def _todos(n: int) -> tuple[str, dict[str, object], str]:
    todos = [
        {"content": c, "status": ["pending", "in_progress"][(n + k) % 2]} for k, c in enumerate(THOUGHTS)
    ]
    return "TodoWrite", {"todos": todos}, "Todos have been modified successfully. Ensure that you continue..."


def _plan(n: int) -> tuple[str, dict[str, object], str]:
    return (
        "update_plan",
        {"plan": [{"step": f"{THOUGHTS[n % 2]} ({n})", "status": "in_progress"}]},
        "Plan updated",
    )


def _memory(n: int) -> tuple[str, dict[str, object], str]:
    note = f"{THOUGHTS[n % 2]} Attempt {'abcdefgh'[n % 8]}."
    return (
        "mcp__memory__add_observations",
        {"observations": [{"contents": [note]}]},
        f'[{{"added": ["{note}"]}}]',
    )


def _saved(n: int) -> tuple[str, dict[str, object], str]:
    return "save_memory", {"fact": f"{THOUGHTS[n % 2]} ({n})"}, f"Saved memory #{100 + n}."


NOTES = [_sequential, _think, _todos, _plan, _memory, _saved]


@pytest.mark.parametrize("thought", NOTES)
def test_the_same_action_between_thoughts_is_refused(make_guard: GuardFactory, thought: object) -> None:
    """Each thought answered something new, so every repeat of the action was excused: never refused."""
    guard, ran = make_guard(), 0
    for n in range(40):
        assert callable(thought)
        run(guard, *thought(n), ok=True)
        if not run(guard, *ACTION, ok=True):
            break
        ran += 1
    assert ran == 5  # same_result_limit 5: the 6th after 5 same results in a row, thoughts between


@pytest.mark.parametrize("thought", NOTES)
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


def test_codex_rerunning_a_failing_test_with_a_plan_update_between_is_refused(
    make_guard: GuardFactory,
) -> None:
    """Each answer held how long the command took (``"duration_seconds"``), so a run whose
    duration differed from the last 7 read as new: with 5 durations the loop went on for dozens
    of runs, and a plan update between broke every rule counting runs in a row."""
    guard, ran = make_guard(), 0
    args = {"command": ["bash", "-lc", "cargo test -q"], "workdir": "/repo"}
    for n in range(40):
        run(guard, *_plan(n), ok=True)
        output = {"output": "test result: FAILED. 3 passed; 1 failed", "metadata": {"exit_code": 101}}
        output["metadata"]["duration_seconds"] = round(1 + n % 5 / 10, 1)  # type: ignore[index]
        if not run(guard, "shell", args, json.dumps(output), ok=True):
            break
        ran += 1
    assert ran == 5  # same_result_limit 5: the 6th run with the same answer, plan updates between


NOTE_KEEPERS = [
    "TodoWrite", "todo_write", "write_todos", "update_todo_list", "update_plan", "add_memory",
    "save_memory", "memory.write", "core_memory_append", "archival_memory_insert", "scratchpad",
    "mcp__memory__add_observations", "mcp__memory__create_entities", "log_note", "addMemory",
]  # fmt: skip
OTHER_TOOLS = [
    "list_todos", "TodoRead", "search_memory", "read_graph", "add_note_to_ticket", "NotebookEdit",
    "report_progress", "create_plan", "update_subscription_plan", "post_to_mastodon", "memory",
    "catalog_note", "search", "create_note", "add_note", "update_note", "create_todo",
    "archival_memory_search",
]  # fmt: skip


def test_which_tools_keep_the_models_notes() -> None:
    """A tool writing the model's task list, plan, memory or scratchpad; not one reading them back,
    one writing somewhere else, or a name that only contains such a word."""
    identity = Guard()._identity

    def note(tool: str) -> bool:
        call = identity.key(tool, {"x": 1})
        assert call is not None
        return is_note(call)

    assert [tool for tool in NOTE_KEEPERS if not note(tool)] == []
    assert [tool for tool in OTHER_TOOLS if note(tool)] == []


REASONS = ["Customer needs a refund", "Refund request: billing", "Billing handles refunds", "Refund needed"]


def test_a_handoff_whose_reason_is_reworded_is_the_same_handoff(make_guard: GuardFactory) -> None:
    """Its only argument, `reason`, is annotation: kept as the call, each rewording was a new
    handoff and a thought, so two agents handing a customer back and forth went on 29 rounds."""
    guard, rounds = make_guard(), 0
    for n in range(40):
        billing = run(
            guard, "transfer_to_billing", {"reason": REASONS[n % 4]}, '{"assistant": "Billing"}', ok=True
        )
        triage = run(
            guard, "transfer_to_triage", {"reason": REASONS[(n + 1) % 4]}, '{"assistant": "Triage"}', ok=True
        )
        if not (billing and triage):
            break
        rounds += 1
    assert rounds <= 3  # cycle.min_repeats 3


def test_tasks_each_described_by_their_one_argument_are_each_a_call(make_guard: GuardFactory) -> None:
    guard = make_guard()
    tasks = [f"Write the {word} section" for word in ("intro", "setup", "usage", "api", "faq", "limits")] * 3
    assert all(
        run(guard, "create_task", {"description": task + "!" * n}, "created", ok=True)
        for n, task in enumerate(tasks)
    )


@pytest.mark.parametrize("thought", NOTES)
def test_a_thought_between_repeats_leaves_them_in_a_row(make_guard: GuardFactory, thought: object) -> None:
    """A status read whose every answer is new (a fresh request id) is stopped only by
    progress_limit, in a row; a thought between ended the row, and it ran to the cap."""
    guard, ran = make_guard(), 0
    for n in range(60):
        assert callable(thought)
        run(guard, *thought(n), ok=True)
        answer = f'{{"state": "PENDING", "request_id": "req_{n:04d}{"qzxw" * 3}"}}'
        if not run(guard, "get_status", {"job": "j-1"}, answer, ok=True):
            break
        ran += 1
    assert ran == 8  # progress_limit 8: the 9th in a row, new answers or not


@pytest.mark.parametrize("thought", NOTES)
def test_a_thought_between_failures_leaves_them_in_a_row(make_guard: GuardFactory, thought: object) -> None:
    guard, ran = make_guard({"stall": {"enabled": False}}), 0
    for n in range(30):
        assert callable(thought)
        run(guard, *thought(n), ok=True)
        if not run(
            guard, "create_issue", {"title": "Login fails"}, "Error: field 'project' is required", ok=False
        ):
            break
        ran += 1
    assert ran == 4  # same_error.identical_limit 4
