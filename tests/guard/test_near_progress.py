"""near_duplicate's progress_limit through the guard, on both stores: a run of calls equal but
for their numbers, new results or not."""

from __future__ import annotations

from tests.store_fixtures import GuardFactory

from .conftest import run


def view(start: int) -> dict[str, object]:
    return {"command": "view", "path": "/repo/pkg/mod.py", "view_range": [start, start + 10]}


def lines(start: int) -> str:
    return "\n".join(f"{n}\tline {n} of the module" for n in range(start, start + 11))


def test_a_file_viewed_10_lines_further_back_step_after_step_is_denied(make_guard: GuardFactory) -> None:
    """Each view returns new lines, so no result rule counts; the 13th view in a row is refused.
    (Near keys are counted once the agent reports results: here from its first call on.)"""
    guard = make_guard()
    assert run(guard, "find_file", {"name": "mod.py"}, "/repo/pkg/mod.py")
    for step in range(12):
        assert run(guard, "str_replace_editor", view(600 - 10 * step), lines(600 - 10 * step))
    decision = guard.check("str_replace_editor", view(480), "a")
    assert (decision.allowed, decision.kind, decision.count, decision.limit) == (
        False,
        "near_duplicate",
        12,
        12,
    )
    assert decision.rule == "near_duplicate.progress_limit"
    assert "progress_limit 12" in (decision.message or "") and "480" not in (decision.message or "")
    assert run(guard, "bash", {"command": "grep -n compute /repo/pkg/mod.py"}, "212: compute(")


def test_another_call_between_pages_ends_the_run(make_guard: GuardFactory) -> None:
    guard = make_guard()
    for step in range(30):
        assert run(guard, "str_replace_editor", view(10 * step), lines(10 * step))
        if step % 10 == 9:
            assert run(guard, "bash", {"command": f"grep -n compute{step} mod.py"}, f"{step}: compute(")


def test_progress_limit_0_turns_the_rule_off(make_guard: GuardFactory) -> None:
    guard = make_guard({"near_duplicate": {"progress_limit": 0}})
    for step in range(30):
        assert run(guard, "str_replace_editor", view(600 - 10 * step), lines(600 - 10 * step))
