"""Several labeled corpora scored each on its own and in total, the anchor rules, invalid
turns, and leave-one-corpus-out, on small corpora written by the tests."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from loopfuse import Guard
from loopfuse.analysis.evaluation import (
    Corpus,
    Grid,
    anchors,
    format_corpora,
    guard_detector,
    identical_failures,
    load_corpora,
    load_corpus,
    loco,
    repeated_in_window,
    score_corpora,
    truncated,
    without_invalid,
)
from loopfuse.transcripts.model import ToolCall

SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "corpus"
Row = tuple[str, str, Any]  # tool, command, output


def _write(folder: Path, name: str, rows: list[Row], *, ok: bool | None = None) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    lines = [{"meta": {"id": name}}] + [
        {"step": i, "tool": t, "args": {"command": c}, "ok": ok, "output_excerpt": str(o)[:3], "output": o}
        for i, (t, c, o) in enumerate(rows)
    ]
    (folder / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))


def _labels(folder: Path, labels: dict[str, dict[str, Any]], ambiguous: dict[str, str] | None = None) -> None:
    (folder / "labels.json").write_text(json.dumps(labels))
    if ambiguous is not None:
        (folder / "ambiguous.json").write_text(json.dumps(ambiguous))


def _work(n: int, prefix: str = "w") -> list[Row]:
    return [("bash", f"{prefix} {i}", f"out {i}") for i in range(n)]


def _same(n: int, output: str = "same") -> list[Row]:
    return [("goto", "goto 72", output)] * n


@pytest.fixture
def corpora(tmp_path: Path) -> Path:
    """alpha: a high and a medium loop, a healthy run; beta: one loop, two healthy runs."""
    alpha, beta = tmp_path / "alpha", tmp_path / "beta"
    _write(alpha, "a-loop", _work(3) + _same(10))
    _write(alpha, "a-scroll", _work(2) + [("scroll_down", "scroll_down", f"page {i}") for i in range(7)])
    _write(alpha, "a-ok", _work(12))
    _labels(alpha, {
        "a-loop": {"label": "loop", "loop_start": 3, "confidence": "high"},
        "a-scroll": {"label": "loop", "loop_start": 2, "confidence": "medium"},
        "a-ok": {"label": "healthy", "confidence": "high"},
    })  # fmt: skip
    _write(beta, "b-loop", _same(9))
    _write(beta, "b-ok", _work(5))
    _write(beta, "b-left-out", _same(9))
    _write(
        beta,
        "b-rerun",
        [r for i in range(4) for r in (("bash", "pytest", "FAILED"), ("edit", f"e {i}", "ok"))],
    )
    _labels(
        beta,
        {
            "b-loop": {"label": "loop", "loop_start": 0, "confidence": "medium"},
            "b-ok": {"label": "healthy"},
            "b-left-out": {"label": "loop", "loop_start": 0},
            "b-rerun": {"label": "healthy", "confidence": "medium"},
        },
        {"b-left-out": "read and left out"},
    )
    return tmp_path


def test_each_corpus_is_scored_on_its_own_and_in_total(corpora: Path) -> None:
    loaded = load_corpora(corpora)
    assert [(c.name, len(c.runs)) for c in loaded] == [("alpha", 3), ("beta", 3)]  # ambiguous left out
    table = score_corpora([("default", guard_detector(Guard)), *anchors()], loaded)
    assert list(table) == ["alpha", "beta", "all"]
    default = {name: scores[0] for name, scores in table.items()}
    assert [(s.caught, s.loops, s.healthy_denied, s.healthy) for s in default.values()] == [
        (1, 2, 0, 1), (1, 1, 0, 2), (2, 3, 0, 3),
    ]  # fmt: skip
    assert default["all"].median_calls_after_start == 5  # the 6th identical call+result is denied
    text = format_corpora(table, loaded)
    assert "alpha (3 runs)" in text and "all (6 runs)" in text
    alpha_default = text.splitlines()[3]
    assert alpha_default.split()[1:4] == ["1/2", "h", "1/1"] and "m 0/1" in alpha_default


def test_a_corpus_folder_alone_is_one_corpus(corpora: Path) -> None:
    assert [c.name for c in load_corpora(corpora / "beta")] == ["beta"]


def test_replay_reports_the_whole_output_not_the_excerpt(tmp_path: Path) -> None:
    rows = [("goto", "goto 72", f"abc{i}") for i in range(8)]  # excerpts all "abc"
    _write(tmp_path, "moving", rows)
    _labels(tmp_path, {"moving": {"label": "healthy"}})
    (run,) = load_corpus(tmp_path, tmp_path / "labels.json")
    assert [c.result for c in run.calls][:2] == ["abc0", "abc1"]
    pairs = dict(anchors())["OpenHands: 4 identical action+obs"]
    assert pairs(run.calls) is None


def _calls(rows: Sequence[tuple[str, str, str, bool | None]]) -> list[ToolCall]:
    return [
        ToolCall(run="r", agent="a", step=i, tool=t, args={"c": c}, result=o, ok=ok)
        for i, (t, c, o, ok) in enumerate(rows)
    ]


def test_crush_stops_after_more_than_five_in_ten() -> None:
    spread = [("x", "1", "same", None), ("y", "2", "other", None)] * 6
    assert repeated_in_window(5, 10)(_calls(spread)) is None  # at most 5 of x in any 10
    packed = [("x", "1", "same", None)] * 6 + [("y", "2", "o", None)]
    assert repeated_in_window(5, 10)(_calls(packed)) == 6


def test_hermes_stops_after_the_fifth_identical_failure() -> None:
    tries = [("edit", "e", "syntax error", False), ("open", "f", "text", None)] * 5 + [
        ("edit", "e", "x", False)
    ]
    assert identical_failures(5)(_calls(tries)) == 9
    different = [("edit", f"e{i}", "syntax error", False) for i in range(8)]
    assert identical_failures(5)(_calls(different)) is None


def test_invalid_turns_reach_note_invalid_or_are_dropped(tmp_path: Path) -> None:
    burst = [("_format_error", "", "no action")]
    rows = _work(5) + burst * 4 + _work(3, "v") + burst * 4 + _work(5, "w") + burst * 8
    _write(tmp_path, "bursty", rows)
    _labels(tmp_path, {"bursty": {"label": "healthy"}})
    corpus = load_corpus(tmp_path, tmp_path / "labels.json")
    detect = guard_detector(Guard)
    assert detect(corpus[0].calls) == 5 + 4 + 3 + 4 + 5 + 5  # the 6th invalid turn in a row
    (dropped,) = without_invalid(corpus)
    assert len(dropped.calls) == 13 and detect(dropped.calls) is None


def test_leave_one_out_picks_limits_with_a_margin(tmp_path: Path) -> None:
    grid = {"circuit_breaker.same_result_limit": (2, 3, 4, 5)}
    for name in ("one", "two"):  # healthy training runs: 3 identical call+result in a row
        _write(tmp_path / name, f"{name}-ok", _work(2) + _same(3) + _work(2, "v"))
        _write(tmp_path / name, f"{name}-loop", _work(1) + _same(12))
        _labels(
            tmp_path / name,
            {f"{name}-ok": {"label": "healthy"}, f"{name}-loop": {"label": "loop", "loop_start": 1}},
        )
    _write(tmp_path / "three", "three-loop", _same(10))
    _labels(tmp_path / "three", {"three-loop": {"label": "loop", "loop_start": 0}})
    folds = {f.held_out: f for f in loco(load_corpora(tmp_path), grid)}
    three = folds["three"]
    assert three.limits == {"circuit_breaker.same_result_limit": 5}  # 3 spares the healthy; 1.5 x 3 -> 5
    assert (three.train_caught, three.train_loops) == (2, 2)
    assert (three.held.caught, three.held.healthy_denied, three.held.median_calls_after_start) == (1, 0, 5)
    assert Grid(load_corpora(tmp_path), grid).select({0, 1}) == {"circuit_breaker.same_result_limit": 5}
    short = {"circuit_breaker.same_result_limit": (2, 3, 4)}  # nothing reaches 4.5: the loosest
    assert Grid(load_corpora(tmp_path), short).select({0, 1}) == {"circuit_breaker.same_result_limit": 4}


def test_leave_one_out_spares_the_healthy_runs_with_excerpts_of_their_results_too(tmp_path: Path) -> None:
    """Healthy runs whose 4 rejected edits in a row differ only past 200 characters: whole,
    2 spares them (1.5 x 2 -> 3); cut to excerpts, only 4 and up do (1.5 x 4 -> 6)."""
    grid = {"stall.tool_error_limit": (2, 3, 4, 5, 6, 8, 12)}
    rejected = "E999 IndentationError: the edit was not applied. " + "the file as it would be: " * 8
    for name in ("one", "two"):
        edits = [("edit", f"edit {i}", f"{rejected}\n{i * 7}: body {i}") for i in range(4)]
        _write(tmp_path / name, f"{name}-ok", _work(2) + edits + _work(2, "v"), ok=False)
        _write(
            tmp_path / name,
            f"{name}-loop",
            [("edit", f"edit {i}", "same rejection") for i in range(12)],
            ok=False,
        )
        _labels(
            tmp_path / name,
            {f"{name}-ok": {"label": "healthy"}, f"{name}-loop": {"label": "loop", "loop_start": 0}},
        )
    assert len(rejected) > 200
    assert Grid(load_corpora(tmp_path), grid).select({0, 1, 2, 3}) == {"stall.tool_error_limit": 6}


@pytest.mark.slow
def test_cli_prints_one_table_per_corpus_and_the_loco_table(cli, corpora: Path) -> None:  # type: ignore[no-untyped-def]
    done = cli("eval", str(corpora), "--loco")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "alpha (3 runs)" in out and "beta (3 runs)" in out and "all (6 runs)" in out
    assert "Hermes: same call fails same x5" in out and "Crush: same call+output >5 in 10" in out
    assert "nothing to drop" in out and "leave-one-corpus-out" in out
    held = [
        line.split()[0]
        for line in out.split("leave-one-corpus-out")[1].splitlines()[2:]
        if line[:1].isalpha()
    ]
    assert held[:2] == ["alpha", "beta"]
    rivals = [line for line in out.splitlines() if line.startswith("  best sparing anchor")]
    assert len(rivals) == 2 and all(": " in line for line in rivals)  # under each fold, named
    assert "each held out, summed" in out and out.count("  anchor, all corpora") == 5
    as_json = json.loads(cli("eval", str(corpora / "alpha"), "--json").stdout)
    assert as_json["alpha"][0]["loops"] == 2 and "loco" not in as_json


def test_cli_reports_a_folder_without_labels(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    done = cli("eval", str(tmp_path))
    assert done.returncode == 2 and "no labels.json" in done.stderr


@pytest.mark.skipif(not (SHARED / "dev" / "labels.json").is_file(), reason="../shared/corpus is absent")
def test_the_default_denies_no_healthy_run_in_the_shared_corpora() -> None:
    loaded = load_corpora(SHARED)
    assert sum(len(c.runs) for c in loaded) >= 189
    table = score_corpora([("default", guard_detector(Guard))], loaded)
    assert {name: scores[0].healthy_denied for name, scores in table.items()} == dict.fromkeys(table, 0)


@pytest.mark.skipif(not (SHARED / "dev" / "labels.json").is_file(), reason="../shared/corpus is absent")
def test_the_default_catches_more_loops_in_total_than_every_anchor() -> None:
    table = score_corpora([("default", guard_detector(Guard)), *anchors()], load_corpora(SHARED))
    default, *others = table["all"]
    assert default.caught > max(s.caught for s in others)


@pytest.mark.skipif(not (SHARED / "dev" / "labels.json").is_file(), reason="../shared/corpus is absent")
@pytest.mark.parametrize("chars", [500, 200, 100])
def test_the_default_denies_no_healthy_run_when_results_are_cut_to_excerpts(chars: int) -> None:
    """As a host that keeps excerpts passes them, or as tools with terse errors read."""
    cut = [Corpus(c.name, tuple(truncated(c.runs, chars))) for c in load_corpora(SHARED)]
    table = score_corpora([("default", guard_detector(Guard))], cut)
    assert {name: scores[0].healthy_denied for name, scores in table.items()} == dict.fromkeys(table, 0)


@pytest.mark.skipif(not (SHARED / "dev" / "labels.json").is_file(), reason="../shared/corpus is absent")
def test_limits_learned_without_each_corpus_beat_every_anchor_on_the_corpora_held_out() -> None:
    """Each corpus held out once: no healthy run denied, and more loops in total than any anchor."""
    corpora = load_corpora(SHARED)
    held = [f.held for f in loco(corpora) if "+" not in f.held_out]
    assert [s.healthy_denied for s in held] == [0] * len(corpora)
    table = score_corpora(anchors(), corpora)
    assert sum(s.caught for s in held) > max(s.caught for s in table["all"])
