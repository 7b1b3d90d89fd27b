"""Loop statistics on call streams a user would recognise."""

from __future__ import annotations

from loopfuse.cli.scan_charts import ChartedRows
from loopfuse.scanstats import COUNT_CAP, CallStats, scan_calls, worst_first
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
    calls = stream([("read", "a"), ("read", "b")] + [("search", "x")] * 6 + [("read", "c")])
    row = stats(calls)
    assert (row.verdict, row.loop_start, row.longest_run, row.longest_run_tool) == ("loop", 2, 6, "search")
    assert (row.calls, row.distinct, row.top_count, row.top_tool, row.duration) == (9, 4, 6, "search", 8.0)
    assert row.top_args is None  # never the values unless asked


def test_paging_with_changing_results_is_not_a_loop_until_long() -> None:
    pages = [ToolCall("run", "a", i, "scroll_down", {}, None, f"page {i}", None) for i in range(6)]
    assert stats(pages).verdict == "suspect"
    long = [ToolCall("run", "a", i, "scroll_down", {}, None, f"page {i}", None) for i in range(12)]
    assert (stats(long).verdict, stats(long).loop_start) == ("loop", 0)


def test_a_cycle_of_two_calls_repeated_seven_times() -> None:
    calls = stream([("open", "f")] + [("edit", "A"), ("edit", "B")] * 7)
    row = stats(calls)
    assert (row.cycle_repeats, row.cycle_period, row.cycle_step) == (7, 2, 1)
    assert (row.verdict, row.loop_start, row.longest_run) == ("loop", 1, 1)


def test_a_healthy_run_and_worst_first_order() -> None:
    healthy = stats(stream([("t", str(i)) for i in range(20)], agent="h"))
    assert (healthy.verdict, healthy.loop_start, healthy.cycle_repeats) == ("ok", None, 0)
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
