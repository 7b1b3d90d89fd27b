"""The HTML report as a person sees it, in headless Chromium: looping runs first, each row
linked to its chart and back, the step and call of a dot, the filter, skipped files."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.analysis.browser import CHROMIUM, Element, dump_dom, png_pixels, screenshot
from tests.analysis.conftest import CLI, write_run

pytestmark = [
    pytest.mark.skipif(
        CHROMIUM is None, reason="chromium is not installed (CI installs it to check the HTML report)"
    ),
    pytest.mark.slow,  # each test runs headless Chromium
]


@pytest.fixture
def report(cli, corpus_dir: Path, tmp_path: Path) -> Path:  # type: ignore[no-untyped-def]
    write_run(corpus_dir / "huge.jsonl", "huge-arguments", [("write_file", {"content": "y" * 5000})] * 6)
    page = tmp_path / "report.html"
    done = cli("scan", str(corpus_dir), "--html", str(page))
    assert done.returncode == 0, done.stderr
    return page


def runs(dom: Element) -> list[Element]:
    table = dom.by_id("runs")
    assert table is not None
    return table.all("tr")[1:]  # after the header row


def test_the_screenshot_is_a_rendered_page_with_loops_in_red(report: Path, tmp_path: Path) -> None:
    shot = tmp_path / "report.png"
    screenshot(report, shot)
    width, height, rows = png_pixels(shot, 400)
    assert (width, height) == (1280, 900)
    size = len(rows[0]) // width
    pixels = {row[i : i + 3] for row in rows for i in range(0, len(row), size)}
    assert len(pixels) > 50  # text, links and borders, not a blank page
    reds = [p for p in pixels if p[0] > 180 and p[1] < 90 and p[2] < 90]
    assert reds, "no red verdict on the first screen"


def test_looping_runs_come_first_and_every_row_links_to_its_chart(report: Path) -> None:
    dom = dump_dom(report)
    rows = runs(dom)
    assert [r.attrs["data-verdict"] for r in rows] == ["loop"] * 3 + ["ok"] * 2
    for row in rows:
        (link,) = row.all("a")
        chart = dom.by_id(link.attrs["href"].removeprefix("#"))
        assert chart is not None and chart.all("svg", **{"class": "timeline"})
        assert chart.all("a", href=f"#{row.attrs['id']}"), "no link back to the row"
        path = row.all("td", **{"class": "path"})[0].all_text
        assert path in chart.all_text


def test_the_filter_in_the_address_shows_only_those_rows(report: Path) -> None:
    dom = dump_dom(report, "#verdict=loop")
    rows = runs(dom)
    shown = [r for r in rows if not r.hidden]
    assert [r.attrs["data-verdict"] for r in shown] == ["loop"] * 3
    for row in rows:
        chart = dom.by_id(row.attrs["data-chart"])
        assert chart is not None and chart.hidden == row.hidden
    assert dom.by_id("shown").all_text == "3 of 5 runs shown"  # type: ignore[union-attr]
    by_text = [r for r in runs(dump_dom(report, "#q=team-a")) if not r.hidden]
    assert [r.all("td", **{"class": "path"})[0].all_text for r in by_text] == ["team-a/session.jsonl"]


def test_pointing_at_a_dot_shows_its_step_and_tool_and_never_the_whole_arguments(
    report: Path, cli: CLI, corpus_dir: Path, tmp_path: Path
) -> None:
    first = runs(dump_dom(report))[0]
    chart = first.attrs["data-chart"]
    tip = dump_dom(report, f"#point={chart}:4").by_id("tip")
    assert tip is not None and not tip.hidden
    assert tip.all_text == "step 4: read_file"  # no argument values without --show-args
    with_args = tmp_path / "with-args.html"
    assert cli("scan", str(corpus_dir), "--html", str(with_args), "--show-args").returncode == 0
    huge = next(r for r in runs(dump_dom(with_args)) if "huge-arguments" in r.all_text)
    tip = dump_dom(with_args, f"#point={huge.attrs['data-chart']}:2").by_id("tip")
    assert tip is not None and tip.all_text.startswith('step 2: write_file {"content":"yyy')
    assert tip.all_text.endswith("...") and len(tip.all_text) < 120


def test_skipped_files_are_listed_with_why(report: Path) -> None:
    skipped = dump_dom(report).by_id("skipped")
    assert skipped is not None
    text = skipped.all_text
    assert "notes.txt" in text and "not a session format loopfuse reads (not JSON)" in text
    assert "broken.json" in text and "not valid JSON at line 3" in text


def test_breaker_markers_and_no_network(cli, fixtures: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    config = tmp_path / "loopfuse.toml"
    config.write_text(
        "[circuit_breaker]\nduplicate_limit = 3\nresult_aware = false\n[loop_brake]\nmax_repeats = 2\n"
    )
    page = tmp_path / "report.html"
    done = cli("scan", str(fixtures), "--html", str(page), "--config", str(config))
    assert done.returncode == 0, done.stderr
    assert "http" not in page.read_text().replace("http://www.w3.org/2000/svg", "")
    dom = dump_dom(page)
    loop_chart = dom.by_id(runs(dom)[0].attrs["data-chart"])
    assert loop_chart is not None
    assert "guard denies: repeat (step 2)" in loop_chart.all_text
    assert "First denied by repeat (loop_brake.max_repeats) at step 2." in loop_chart.all_text
    assert (
        "duplicate denies (step 3)" in loop_chart.all_text and "repeat denies (step 2)" in loop_chart.all_text
    )


def test_names_from_session_files_are_shown_as_text_never_as_markup(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    write_run(
        tmp_path / "s/hostile.jsonl", "<b>run</b>", [("<img src=x onerror=alert(1)>", {"a": "'\""})] * 6
    )
    page = tmp_path / "report.html"
    assert cli("scan", str(tmp_path / "s"), "--html", str(page), "--show-args").returncode == 0
    dom = dump_dom(page, "#point=chart-0:1")
    assert dom.all("img") == [] and dom.all("b") == []
    (row,) = runs(dom)
    assert "<b>run</b>" in row.all_text and "6x <img src=x onerror=alert(1)>" in row.all_text
    assert dom.by_id("tip").all_text == 'step 1: <img src=x onerror=alert(1)> {"a":"\'\\""}'  # type: ignore[union-attr]
