"""``loopfuse eval`` on labels it cannot use and on options that do not go together: exit 2
with a message naming the file, the run, the key and the value, never a traceback, and no
run scored as something it was not labeled."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.analysis.conftest import run_cli

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
LOOP = {"label": "loop", "loop_start": 8}
HEALTHY = {"label": "healthy"}

BAD_LABELS = {
    "a list": ([1, 2], "the labels must be a JSON object"),
    "an entry not an object": ({"search_loop": "loop"}, 'run "search_loop": expected an object'),
    "an unknown label": (
        {"search_loop": {"label": "maybe"}},
        'run "search_loop": "label" is "maybe"; allowed: "loop" or "healthy"',
    ),
    "no label": ({"search_loop": {"loop_start": 8}}, 'run "search_loop": "label" is absent'),
    "a loop_start not a number": (
        {"search_loop": {"label": "loop", "loop_start": "x"}},
        'run "search_loop": "loop_start" is "x"; allowed: the step where the loop starts, an integer >= 0',
    ),
    "a loop without loop_start": ({"search_loop": {"label": "loop"}}, '"loop_start" is absent'),
    "a negative loop_start": ({"search_loop": {"label": "loop", "loop_start": -1}}, '"loop_start" is -1'),
    "a boolean loop_start": ({"search_loop": {"label": "loop", "loop_start": True}}, '"loop_start" is true'),
    "a healthy run with loop_start": (
        {"healthy_fix": {"label": "healthy", "loop_start": 3}},
        'run "healthy_fix": "loop_start" is 3; a healthy run has none',
    ),
    "a confidence not a word": ({"healthy_fix": {**HEALTHY, "confidence": 3}}, '"confidence" is 3'),
    "a name with a path": (
        {"../corp/healthy_fix": HEALTHY},
        "run \"../corp/healthy_fix\": a run's name is its file's name in the corpus folder",
    ),
    "a pattern naming no file": ({"search_loop": LOOP, "*": HEALTHY}, "1 labeled run(s) have no file in"),
    "a run without a file": ({"search_loop": LOOP, "gone": HEALTHY}, "have no file in"),
}


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    for name in ("search_loop.jsonl", "healthy_fix.jsonl"):
        shutil.copy(EXAMPLES / name, tmp_path / name)
    return tmp_path


@pytest.mark.parametrize("case", sorted(BAD_LABELS))
def test_labels_that_do_not_fit_exit_2_naming_file_run_key_and_value(corpus: Path, case: str) -> None:
    labels, message = BAD_LABELS[case]
    (corpus / "labels.json").write_text(json.dumps(labels))
    done = run_cli("eval", str(corpus), "--labels", str(corpus / "labels.json"))
    assert done.returncode == 2, done.stdout
    assert f"loopfuse: invalid labels: {corpus / 'labels.json'}" in done.stderr
    assert message in done.stderr and "Traceback" not in done.stderr
    assert done.stdout == ""


@pytest.mark.parametrize(
    ("text", "message"),
    [("{bad", "is not valid JSON"), ('{"a": {}, "a": {}}', 'the key "a" is given twice')],
)
def test_labels_that_are_not_json_exit_2(corpus: Path, text: str, message: str) -> None:
    (corpus / "labels.json").write_text(text)
    done = run_cli("eval", str(corpus), "--labels", str(corpus / "labels.json"))
    assert done.returncode == 2 and message in done.stderr and "Traceback" not in done.stderr


def test_json_nested_too_deeply_is_a_message_not_a_traceback(corpus: Path) -> None:
    deep = "[" * 100_000 + "]" * 100_000
    (corpus / "labels.json").write_text(deep)
    done = run_cli("eval", str(corpus), "--labels", str(corpus / "labels.json"))
    assert done.returncode == 2 and "is not valid JSON: nested too deeply" in done.stderr
    assert "Traceback" not in done.stderr
    (corpus / "labels.json").write_text(json.dumps({"search_loop": LOOP, "healthy_fix": HEALTHY}))
    (corpus / "deep.jsonl").write_text('{"tool": "a", "args": ' + deep + "}\n")
    done = run_cli("eval", str(corpus))
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr


def test_a_label_name_is_a_literal_run_name_not_a_pattern(corpus: Path) -> None:
    (corpus / "[s]earch_loop.jsonl").write_bytes((EXAMPLES / "healthy_fix.jsonl").read_bytes())
    (corpus / "labels.json").write_text(json.dumps({"[s]earch_loop": HEALTHY, "search_loop": LOOP}))
    done = run_cli("eval", str(corpus), "--labels", str(corpus / "labels.json"), "--json")
    assert done.returncode == 0, done.stderr
    (score,) = json.loads(done.stdout)
    # As a pattern, "[s]earch_loop" read search_loop.jsonl: the loop, scored as a healthy run denied.
    assert (score["caught"], score["loops"], score["healthy_denied"], score["healthy"]) == (1, 1, 0, 1)


def test_bad_labels_in_a_folder_of_corpora_exit_2_naming_them(corpus: Path, tmp_path: Path) -> None:
    good = tmp_path / "good"
    good.mkdir()
    shutil.copy(EXAMPLES / "healthy_fix.jsonl", good / "healthy_fix.jsonl")
    (good / "labels.json").write_text(json.dumps({"healthy_fix": HEALTHY}))
    (corpus / "labels.json").write_text(json.dumps({"search_loop": {"label": "maybe"}}))
    done = run_cli("eval", str(tmp_path))
    assert done.returncode == 2
    assert f'invalid labels: {corpus / "labels.json"}: run "search_loop": "label" is "maybe"' in done.stderr


def test_loco_with_labels_is_a_usage_error(corpus: Path) -> None:
    (corpus / "labels.json").write_text(json.dumps({"search_loop": LOOP, "healthy_fix": HEALTHY}))
    done = run_cli("eval", str(corpus), "--labels", str(corpus / "labels.json"), "--loco")
    assert done.returncode == 2 and done.stdout == ""
    assert "error: argument --loco: not allowed with argument --labels" in done.stderr


def test_baselines_without_labels_is_a_usage_error(corpus: Path) -> None:
    (corpus / "labels.json").write_text(json.dumps({"search_loop": LOOP, "healthy_fix": HEALTHY}))
    done = run_cli("eval", str(corpus), "--baselines")
    assert done.returncode == 2 and done.stdout == ""
    assert "error: argument --baselines: only with --labels" in done.stderr
