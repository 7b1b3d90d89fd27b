"""Pydantic AI (v2): a run's guard state goes when the run ends, however it ends."""

from __future__ import annotations

import pytest

from loopfuse import Guard, LoopAbortedError

from .test_pydantic_ai import LIMITS, Counter, ScriptedModel, add_delegate, forever, make_agent, playing


async def test_a_finished_run_leaves_no_state_behind() -> None:
    counter, guard = Counter(), Guard.from_config(LIMITS)
    model = ScriptedModel(playing([[("search", {"q": "a"})], [("search", {"q": "b"})]]))

    assert (await make_agent(model, guard, counter).run("find it")).output == "done"
    assert counter.runs == 2
    assert guard.stats()["agents"] == 0


@pytest.mark.usefixtures("sync_run_loop")
def test_a_run_stopped_for_looping_leaves_no_state_behind() -> None:
    guard = Guard.from_config(LIMITS)
    with pytest.raises(LoopAbortedError):
        make_agent(ScriptedModel(forever), guard, Counter()).run_sync("find it")
    assert guard.stats()["agents"] == 0


async def test_a_sub_agent_run_ending_inside_a_tool_keeps_the_outer_run_state() -> None:
    counter, guard = Counter(), Guard.from_config(LIMITS)
    inner = make_agent(ScriptedModel(forever), guard, counter)
    turns = [forever(0), forever(0), [("delegate", {"task": "x"})], forever(0), forever(0)]
    outer = make_agent(ScriptedModel(playing(turns)), guard, counter)
    add_delegate(outer, inner, answer="3 results")  # nothing new: a new answer would excuse the re-run

    assert (await outer.run("go")).output == "done"
    assert counter.runs == 3 + 3  # outer: the 4th search was denied; inner: stopped after 3
    assert guard.stats()["agents"] == 0
