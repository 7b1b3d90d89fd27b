"""Loop statistics on call streams a user would recognise."""

from __future__ import annotations

from loopfuse import Guard, parse_config
from loopfuse.analysis.replay import shadow_config
from loopfuse.analysis.scanstats import COUNT_CAP, CallStats, scan_calls, worst_first
from loopfuse.cli.scan_charts import ChartedRows
from loopfuse.transcripts.model import ToolCall


def stream(
    tools_and_args: list[tuple[str, str]], result: str | None = "same", agent: str = "a"
) -> list[ToolCall]:
    return [
        ToolCall("run", agent, i, t, {"q": a}, float(i), result, None)
        for i, (t, a) in enumerate(tools_and_args)
    ]


def stats(calls: list[ToolCall]):  # type: ignore[no-untyped-def]
    (row,) = scan_calls(calls)
    return row


def test_identical_calls_in_a_row_with_unchanged_results_are_a_loop() -> None:
    """The guard's window denies the 6th search with the same result; the statistics see
    the run of identical calls start at step 2."""
    calls = stream([("read", "a"), ("read", "b")] + [("search", "x")] * 6 + [("read", "c")])
    row = stats(calls)
    assert (row.verdict, row.loop_start, row.longest_run, row.longest_run_tool) == ("loop", 2, 6, "search")
    assert (row.breaker, row.rule, row.denied_at) == ("duplicate", "circuit_breaker.same_result_limit", 7)
    assert (row.calls, row.distinct, row.top_count, row.top_tool, row.duration) == (9, 4, 6, "search", 8.0)
    assert row.top_args is None  # never the values unless asked


def test_paging_with_changing_results_is_not_a_loop_until_long() -> None:
    """Six pages: repetition the statistics flag, that no breaker denies. Twelve: the
    window's progress limit denies the 9th."""
    pages = [ToolCall("run", "a", i, "scroll_down", {}, None, f"page {i}", None) for i in range(6)]
    assert (stats(pages).verdict, stats(pages).breaker, stats(pages).denied_at) == ("suspect", None, None)
    long = stats([ToolCall("run", "a", i, "scroll_down", {}, None, f"page {i}", None) for i in range(12)])
    assert (long.verdict, long.rule, long.denied_at) == ("loop", "circuit_breaker.progress_limit", 8)


def test_a_cycle_of_two_calls_repeated_seven_times() -> None:
    calls = stream([("open", "f")] + [("edit", "A"), ("edit", "B")] * 7)
    row = stats(calls)
    assert (row.cycle_repeats, row.cycle_period, row.cycle_step) == (7, 2, 1)
    assert (row.verdict, row.loop_start, row.longest_run) == ("loop", 1, 1)
    assert (row.breaker, row.rule, row.denied_at) == ("cycle", "cycle.min_repeats", 7)


def test_a_healthy_run_and_worst_first_order() -> None:
    healthy = stats([ToolCall("run", "h", i, "t", {"q": str(i)}, None, chr(97 + i)) for i in range(20)])
    assert (healthy.verdict, healthy.loop_start, healthy.cycle_repeats, healthy.breaker) == (
        "ok",
        None,
        0,
        None,
    )
    looping = stats(stream([("s", "x")] * 9, agent="l"))
    assert [r.agent for r in worst_first([healthy, looping])] == ["l", "h"]


def test_show_args_keeps_only_the_most_repeated_call() -> None:
    acc = CallStats("run", "a", keep_args=True)
    for call in stream([("s", "x"), ("s", "y"), ("s", "y")]):
        acc.add(call)
    assert acc.finish().top_args == '{"q":"y"}'


def test_memory_stays_bounded_on_many_distinct_calls() -> None:
    acc = CallStats("run", "a")
    n = COUNT_CAP * 5
    for i in range(n):
        acc.add(ToolCall("run", "a", i, "t", {"i": i}))
    row = acc.finish()
    assert len(acc._counts) == COUNT_CAP and len(acc._sketched) <= 1024
    assert not row.distinct_exact and abs(row.distinct - n) / n < 0.15


def test_only_the_worst_runs_keep_their_timelines_while_scanning() -> None:
    """With a chart limit of 2, the two rows worst_first puts on top keep their timeline."""
    charts = ChartedRows(2)
    lengths = [3, 9, 1, 6, 9, 2]  # identical calls in a row per run: 9 and 9 are the worst
    for n, length in enumerate(lengths):
        calls = [ToolCall(f"r{n}", "a", i, "t", {"i": i if i >= length else 0}, None, "x") for i in range(10)]
        (row,) = scan_calls(calls, timeline=True)
        charts.add(row)
    charted = [r.run for r in worst_first(charts.rows) if r.timeline]
    assert charted == ["r1", "r4"]
    assert [r.run for r in worst_first(charts.rows)][:2] == charted
    assert all(len(r.timeline_calls) == r.distinct for r in charts.rows if r.timeline)


def test_the_same_calls_with_results_that_differ_by_a_number_are_a_near_duplicate_loop() -> None:
    """Twenty different queries whose results are equal once numbers are masked: the
    statistics see no repetition, the near-duplicate breaker denies the 10th call."""
    row = stats(stream([("t", str(i)) for i in range(20)]))
    assert (row.longest_run, row.top_count, row.loop_start) == (1, 1, None)
    assert (row.verdict, row.breaker, row.rule, row.denied_at) == (
        "loop",
        "near_duplicate",
        "near_duplicate.limit",
        9,
    )


def test_the_verdict_follows_the_configured_guard() -> None:
    """The same run under a stricter and a looser configuration."""
    calls = stream([("s", "x")] * 4)
    strict = Guard(shadow_config(parse_config({"loop_brake": {"max_repeats": 2}})))
    (row,) = scan_calls(calls, guard=strict)
    assert (row.verdict, row.breaker, row.rule, row.denied_at) == (
        "loop",
        "repeat",
        "loop_brake.max_repeats",
        2,
    )
    (row,) = scan_calls(calls)
    assert (row.verdict, row.breaker) == ("suspect", None)


def test_a_guard_in_shadow_mode_still_gives_the_verdict() -> None:
    """``mode = "shadow"`` lets every call through; its denials still make the run a loop."""
    shadow = Guard(shadow_config(parse_config({"mode": "shadow", "loop_brake": {"max_repeats": 2}})))
    (row,) = scan_calls(stream([("s", "x")] * 4), guard=shadow)
    assert (row.verdict, row.breaker, row.denied_at) == ("loop", "repeat", 2)


def test_each_run_is_forgotten_by_the_guard_when_it_ends() -> None:
    """Two runs of the same name one after the other are judged apart: the second one's
    three searches do not add to the first one's three."""
    guard = Guard(shadow_config(parse_config({"loop_brake": {"max_repeats": 4}})))
    search = stream([("s", "x")] * 3)
    calls = [*search, ToolCall("other", "a", 0, "t", {}, None, "y"), *search]
    rows = list(scan_calls(calls, guard=guard))
    assert [(r.run, r.verdict) for r in rows] == [("run", "suspect"), ("other", "ok"), ("run", "suspect")]
    assert guard.stats()["agents"] == 0
