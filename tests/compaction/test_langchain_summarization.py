"""GuardedSummarizationMiddleware end to end: create_agent, a scripted model, a real tool."""

from __future__ import annotations

import logging
import uuid
from typing import Any

import pytest
from langchain.agents.middleware import SummarizationMiddleware
from langchain_core.messages import BaseMessage

from loopfuse.adapters.langchain import GuardedSummarizationMiddleware
from loopfuse.errors import ConfigError

from .conftest import MODERATE_CHARS, OVERSIZED_CHARS, REFILLING_CHARS, MakeScenario
from .scripted import (
    FINAL_ANSWER,
    SECRET_ARGUMENT,
    CountingSummarizer,
    ScriptedAgentModel,
    arun,
    build_agent,
    file_reader,
    run,
)

TURNS = 12
NOTICE = "[loopfuse] Automatic compaction stopped"


def notices(prompt: list[BaseMessage]) -> int:
    return sum(str(m.content).count(NOTICE) for m in prompt if m.type == "system")


def test_plain_middleware_summarizes_on_every_step_with_an_oversized_output(
    make_scenario: MakeScenario,
) -> None:
    run_, _ = make_scenario(SummarizationMiddleware, OVERSIZED_CHARS, TURNS)
    run(run_.agent)
    assert run_.summarizer.calls >= TURNS - 2  # the loop this package stops


def test_breaker_stops_the_loop_after_the_allowed_rapid_refills(make_scenario: MakeScenario) -> None:
    run_, guard = make_scenario(GuardedSummarizationMiddleware, OVERSIZED_CHARS, TURNS, predict_futile=False)
    result = run(run_.agent)
    assert run_.summarizer.calls <= guard.max_consecutive_rapid_refills + 1
    assert len(run_.ran) == TURNS  # every tool body still ran
    assert result["messages"][-1].content == FINAL_ANSWER  # the run ended normally
    assert guard.status("t1").tripped


def test_predict_futile_refuses_the_first_attempt_so_no_summary_is_paid_for(
    make_scenario: MakeScenario,
) -> None:
    run_, guard = make_scenario(GuardedSummarizationMiddleware, OVERSIZED_CHARS, TURNS)
    result = run(run_.agent)
    assert run_.summarizer.calls == 0
    assert result["messages"][-1].content == FINAL_ANSWER and len(run_.ran) == TURNS
    assert "over the trigger by itself" in (guard.status("t1").compaction.latch_reason or "")


def test_the_notice_reaches_the_model_once_per_call_while_tripped(make_scenario: MakeScenario) -> None:
    run_, _ = make_scenario(GuardedSummarizationMiddleware, OVERSIZED_CHARS, TURNS)
    run(run_.agent)
    counts = [notices(prompt) for prompt in run_.model.prompts]
    assert counts[0] == 0 and counts[-1] == 1 and set(counts) == {0, 1}
    last_system = next(m for m in run_.model.prompts[-1] if m.type == "system")
    assert "read_file output (path: logs/part" in last_system.content
    assert "Do not re-read the oversized output" in last_system.content


def test_without_announce_in_prompt_the_model_sees_no_notice(make_scenario: MakeScenario) -> None:
    run_, guard = make_scenario(
        GuardedSummarizationMiddleware, OVERSIZED_CHARS, TURNS, announce_in_prompt=False
    )
    run(run_.agent)
    assert guard.status("t1").tripped
    assert all(notices(prompt) == 0 for prompt in run_.model.prompts)


def test_rapid_refills_under_the_trigger_trip_and_the_kept_tail_is_not_recounted(
    make_scenario: MakeScenario,
) -> None:
    # Each compaction keeps the last tool turn; one more turn refills the context. Counting the
    # kept turn again would make every gap look like 2 tool turns, a healthy gap, and never trip.
    run_, guard = make_scenario(GuardedSummarizationMiddleware, REFILLING_CHARS, TURNS, keep=("messages", 2))
    run(run_.agent)
    status = guard.status("t1")
    assert status.tripped and "rapid refills in a row" in (status.compaction.latch_reason or "")
    assert status.compaction.last_gaps and set(status.compaction.last_gaps) == {1}
    assert run_.summarizer.calls <= guard.max_consecutive_rapid_refills + 1


def test_a_long_healthy_run_summarizes_like_the_plain_middleware_and_never_trips(
    make_scenario: MakeScenario,
) -> None:
    plain, _ = make_scenario(SummarizationMiddleware, MODERATE_CHARS, 40)
    guarded, guard = make_scenario(GuardedSummarizationMiddleware, MODERATE_CHARS, 40)
    run(plain.agent)
    run(guarded.agent)
    assert guarded.summarizer.calls == plain.summarizer.calls >= 8
    status = guard.status("t1")
    assert not status.tripped and status.compaction.refusals == 0
    assert min(status.compaction.last_gaps) >= guard.tool_turn_threshold
    assert all(notices(prompt) == 0 for prompt in guarded.model.prompts)


def test_one_warning_names_the_culprit_and_never_other_argument_values(
    make_scenario: MakeScenario, caplog: pytest.LogCaptureFixture
) -> None:
    run_, guard = make_scenario(GuardedSummarizationMiddleware, OVERSIZED_CHARS, TURNS)
    with caplog.at_level(logging.WARNING, logger="loopfuse.compaction"):
        run(run_.agent)
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1
    assert "read_file output (path: logs/part1.log)" in warnings[0] and "trigger" in warnings[0]
    notice_text = " ".join(str(m.content) for p in run_.model.prompts for m in p if m.type == "system")
    report = guard.status("t1").report
    assert report is not None
    for shown in (warnings[0], notice_text, report.describe()):
        assert SECRET_ARGUMENT not in shown


def test_fixed_prompt_near_the_trigger_is_reported(make_scenario: MakeScenario) -> None:
    big_prompt = "Follow the house rules. " * 300  # ~1,800 tokens against a 2,000-token trigger
    run_, guard = make_scenario(GuardedSummarizationMiddleware, OVERSIZED_CHARS, 4, system_prompt=big_prompt)
    run(run_.agent)
    report = guard.status("t1").report
    assert report is not None and report.fixed_prompt_near_trigger
    assert "fixed part of the prompt" in report.describe()


def test_state_is_per_thread_and_reset_rearms_one_thread(make_scenario: MakeScenario) -> None:
    looping, guard = make_scenario(GuardedSummarizationMiddleware, OVERSIZED_CHARS, TURNS)
    run(looping.agent, thread_id="a")
    model, (reader, _) = ScriptedAgentModel(tool_turns=30), file_reader(MODERATE_CHARS)
    run(build_agent(model, reader, guard), thread_id="b")  # same middleware, another conversation
    assert guard.status("a").tripped
    healthy = guard.status("b")
    assert not healthy.tripped and healthy.compaction.compactions >= 4
    assert all(notices(prompt) == 0 for prompt in model.prompts)
    clock = guard.status("a").compaction.tool_turns
    guard.reset("a")
    status = guard.status("a")
    assert not status.tripped and status.report is None and status.compaction.tool_turns == clock


@pytest.mark.parametrize("thread_id", [42, uuid.UUID(int=7)], ids=["int", "uuid"])
def test_a_thread_named_by_a_number_or_a_uuid_is_found_by_it(
    make_scenario: MakeScenario, thread_id: Any
) -> None:
    """Kept under its text, the thread was not found by the id the graph's config gave: its
    status said it had not tripped, and ``reset`` left it blocked."""
    looping, guard = make_scenario(GuardedSummarizationMiddleware, OVERSIZED_CHARS, TURNS)
    run(looping.agent, thread_id=thread_id)
    assert guard.status(thread_id).tripped and guard.status(thread_id).report is not None
    guard.reset(thread_id)
    assert not guard.status(thread_id).tripped


async def test_async_run_behaves_the_same(make_scenario: MakeScenario) -> None:
    run_, guard = make_scenario(GuardedSummarizationMiddleware, OVERSIZED_CHARS, TURNS)
    result = await arun(run_.agent)
    assert run_.summarizer.calls == 0 and result["messages"][-1].content == FINAL_ANSWER
    assert guard.status("t1").tripped and notices(run_.model.prompts[-1]) == 1


@pytest.mark.parametrize(
    ("kwargs", "key"),
    [
        ({"tool_turn_threshold": 0}, "tool_turn_threshold"),
        ({"max_consecutive_rapid_refills": -1}, "max_consecutive_rapid_refills"),
        ({"announce_in_prompt": "yes"}, "announce_in_prompt"),
        ({"predict_futile": None}, "predict_futile"),
    ],
)
def test_invalid_breaker_values_are_refused_at_construction(kwargs: dict[str, Any], key: str) -> None:
    with pytest.raises(ConfigError, match=key):
        GuardedSummarizationMiddleware(CountingSummarizer(), trigger=("tokens", 2000), **kwargs)
