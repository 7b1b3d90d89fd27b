"""Bad input as a user meets it: damaged fields, a long first line, a byte order mark,
impossible times, a FIFO. Never a traceback; a folder goes on, a named file is named."""

from __future__ import annotations

import codecs
import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.analysis.conftest import CLI, REPO

# One session per reader, each with a field of the wrong type where an id or a result goes.
DAMAGED = {
    "claude_list_id.jsonl": [
        {"type": "assistant", "sessionId": "cc-run", "uuid": "u1", "timestamp": "2026-01-01T00:00:00Z",
         "message": {"role": "assistant", "content": [
             {"type": "tool_use", "id": ["a", "list"], "name": "Bash", "input": {"command": "ls"}}]}},
    ],
    "codex_object_call_id.jsonl": [
        {"timestamp": "2026-01-01T00:00:00Z", "type": "session_meta", "payload": {"id": "codex-run"}},
        {"timestamp": "2026-01-01T00:00:01Z", "type": "response_item",
         "payload": {"type": "function_call", "name": "shell", "arguments": "{}", "call_id": {"an": "object"}}},
        {"timestamp": "2026-01-01T00:00:02Z", "type": "response_item",
         "payload": {"type": ["a", "list"], "call_id": "c1"}},
    ],
    "gemini_int_result.json": {
        "sessionId": "gemini-run", "projectHash": "h",
        "messages": [{"type": "gemini", "toolCalls": [
            {"id": "c1", "name": "ls", "args": {}, "result": 5, "status": "success"}]}],
    },
}  # fmt: skip


CLEAN = {
    "claude.jsonl": [
        {"type": "assistant", "sessionId": "cc-run", "uuid": "u1",
         "message": {"role": "assistant", "content": [
             {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls"}}]}},
    ],
    "gemini.json": {
        "sessionId": "gemini-run", "projectHash": "h",
        "messages": [{"type": "gemini", "toolCalls": [{"id": "c1", "name": "ls", "args": {}, "status": "success"}]}],
    },
}  # fmt: skip


def write(path: Path, content: Any) -> Path:
    """``content`` as JSON lines (a list of rows, for ``.jsonl``) or one JSON document."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix == ".jsonl":
        path.write_text("".join(json.dumps(row) + "\n" for row in content))
    else:
        path.write_text(json.dumps(content))
    return path


def normalized(run: str, times: list[Any]) -> list[dict[str, Any]]:
    return [{"meta": {"id": run}}] + [
        {"step": i, "tool": "search", "args": {"q": i}, "time": t, "output": "x"} for i, t in enumerate(times)
    ]


@pytest.mark.parametrize("name", sorted(DAMAGED))
def test_a_damaged_field_is_no_traceback_in_scan_replay_or_eval(cli: CLI, tmp_path: Path, name: str) -> None:
    session = write(tmp_path / "corpus" / name, DAMAGED[name])
    (tmp_path / "corpus/labels.json").write_text(
        json.dumps({session.name.split(".")[0]: {"label": "healthy"}})
    )
    runs = {
        "scan": cli("scan", str(session)),
        "scan folder": cli("scan", str(session.parent), "--json"),
        "replay": cli("replay", str(session)),
        "eval": cli("eval", str(session.parent), "--labels", str(session.parent / "labels.json")),
    }
    for how, done in runs.items():
        assert "Traceback" not in done.stderr, (how, done.stderr)
        assert done.returncode == 0, (how, done.stderr)
    assert "files read: 1 " in runs["scan"].stdout and "0 malformed" in runs["scan"].stdout
    (row,) = json.loads(runs["scan folder"].stdout)["runs"]
    assert row["calls"] == 1 and row["run"] in ("cc-run", "codex-run", "gemini-run")
    assert ["main", "1", "0", "-", "0"] in [line.split() for line in runs["replay"].stdout.splitlines()]


@pytest.mark.parametrize("size", [200_000, 20_000_000])  # beyond the 64 KiB head; beyond 16 MiB
def test_a_session_opening_with_a_long_line_is_recognized(cli: CLI, tmp_path: Path, size: int) -> None:
    paste = {"type": "user", "sessionId": "long-run", "uuid": "u0", "parentUuid": None,
             "message": {"role": "user", "content": "x" * size}}  # fmt: skip
    call = {"type": "assistant", "sessionId": "long-run", "uuid": "u1", "parentUuid": "u0",
            "message": {"role": "assistant", "content": [
                {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls"}}]}}  # fmt: skip
    session = write(tmp_path / "long.jsonl", [paste, call])
    done = cli("scan", str(session))
    assert done.returncode == 0, done.stderr
    assert "files read: 1 claude-code" in done.stdout and "long-run" in done.stdout
    assert "1x Bash" in done.stdout


@pytest.mark.parametrize(
    ("name", "content", "shown"),
    [
        ("normalized.jsonl", normalized("bom-run", [1, 2]), "bom-run"),
        ("claude.jsonl", CLEAN["claude.jsonl"], "cc-run"),
        ("gemini.json", CLEAN["gemini.json"], "gemini-run"),
    ],
)
def test_a_byte_order_mark_is_read_past(
    cli: CLI, tmp_path: Path, name: str, content: Any, shown: str
) -> None:
    session = write(tmp_path / name, content)
    session.write_bytes(codecs.BOM_UTF8 + session.read_bytes())
    done = cli("scan", str(session))
    assert done.returncode == 0, done.stderr
    assert shown in done.stdout
    assert "0 malformed line(s)/document(s)" in done.stdout and "skipped:\n" not in done.stdout


def test_impossible_times_are_missing_times_and_the_json_stays_valid(cli: CLI, tmp_path: Path) -> None:
    # Python's json writes Infinity and NaN as the bare words a damaged log holds.
    write(tmp_path / "inf.jsonl", normalized("inf-run", [0, float("inf"), 60, float("nan")]))
    write(tmp_path / "huge.jsonl", normalized("huge-run", [-1e308, 1e308, 10**30, 30]))

    def no_constants(word: str) -> None:
        raise AssertionError(f"invalid JSON: {word}")

    done = cli("scan", str(tmp_path), "--json")
    assert done.returncode == 0, done.stderr
    runs = {r["run"]: r for r in json.loads(done.stdout, parse_constant=no_constants)["runs"]}
    assert runs["inf-run"]["duration"] == 60 and runs["huge-run"]["duration"] == 0
    table = cli("scan", str(tmp_path)).stdout
    assert "infh" not in table and " 60s " in table


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_is_skipped_in_a_folder_and_refused_by_name(cli: CLI, tmp_path: Path) -> None:
    write(tmp_path / "run.jsonl", normalized("fifo-neighbour", [1, 2]))
    os.mkfifo(tmp_path / "pipe.jsonl")
    done = cli("scan", str(tmp_path))  # would wait forever for a writer if the FIFO were opened
    assert done.returncode == 0, done.stderr
    assert "fifo-neighbour" in done.stdout
    assert "pipe.jsonl: not a regular file" in done.stdout and "1 unknown file(s)" in done.stdout
    named = cli("scan", str(tmp_path / "pipe.jsonl"))
    assert named.returncode == 2 and f"{tmp_path / 'pipe.jsonl'}" in named.stderr
    assert "not a regular file" in named.stderr and "Traceback" not in named.stderr


def test_the_reason_a_named_file_is_refused_is_said_once(cli: CLI, tmp_path: Path) -> None:
    garbage = tmp_path / "garbage.bin"
    garbage.write_bytes(b"\x00\x01 not json at all")
    other = write(tmp_path / "other.json", {"some": "json"})
    done = cli("scan", str(garbage))
    assert done.returncode == 2
    assert done.stderr.strip() == (
        f"loopfuse: {garbage} is not a recorded agent session in a format loopfuse reads (not JSON)"
    )
    assert (
        cli("scan", str(other)).stderr.strip().endswith("in a format loopfuse reads (JSON of another shape)")
    )


@pytest.mark.parametrize("value", ["abc", "0", "-5", "1.5", "\u00b2", "\u2460", "9" * 5000])
def test_a_bad_document_size_limit_is_a_usage_error_not_a_traceback(cli: CLI, value: str) -> None:
    done = cli("scan", "examples", cwd=REPO, env={"LOOPFUSE_MAX_DOCUMENT_MB": value})
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert f"LOOPFUSE_MAX_DOCUMENT_MB = {value!r} is not allowed: expected a whole number" in done.stderr
    assert cli("--help", env={"LOOPFUSE_MAX_DOCUMENT_MB": value}).returncode == 0


@pytest.mark.parametrize("where", ["folder", "missing/report.html"])
def test_an_html_report_that_cannot_be_written_is_a_usage_error(cli: CLI, tmp_path: Path, where: str) -> None:
    (tmp_path / "folder").mkdir()
    done = cli("scan", "examples", "--html", str(tmp_path / where), cwd=REPO)
    assert (done.returncode, done.stderr) == (
        2,
        f"loopfuse: cannot write the HTML report to {tmp_path / where}\n",
    )


def test_an_html_report_of_text_that_is_not_valid_unicode_is_written(cli: CLI, tmp_path: Path) -> None:
    """Lone surrogates (JSON escapes of undecodable bytes) in a session's names: the report
    shows them as U+FFFD; a report that cannot be written never leaves one cut short."""
    rows = [{"meta": {"id": "run\\ud800"}}] + [
        {"step": n, "tool": "t\\udfff", "args": {}, "ok": True, "output_excerpt": "x", "agent": "a"}
        for n in range(8)
    ]
    (tmp_path / "s.jsonl").write_text("".join(json.dumps(r).replace("\\\\u", "\\u") + "\n" for r in rows))
    report = tmp_path / "report.html"
    done = cli("scan", str(tmp_path / "s.jsonl"), "--html", str(report))
    assert done.returncode == 0, done.stderr
    assert "run\ufffd" in report.read_text(encoding="utf-8")
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


@pytest.mark.parametrize("indent", [None, 2])
async def test_pydantic_ai_messages_are_no_gemini_session_however_written(
    cli: CLI, tmp_path: Path, indent: int | None
) -> None:
    """Pydantic AI's ``all_messages_json()`` holds ``parts`` as a Gemini session does, but no
    ``role``: a format loopfuse does not read, compact or indented (it was read as Gemini, compact,
    and found no call)."""
    pydantic_ai = pytest.importorskip("pydantic_ai")
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import FunctionModel

    def model(messages: Any, info: Any) -> ModelResponse:
        if len(messages) > 1:
            return ModelResponse(parts=[TextPart("done")])
        return ModelResponse(parts=[ToolCallPart("search", {"q": "x"})])

    agent = pydantic_ai.Agent(FunctionModel(model))
    agent.tool_plain(lambda q: "3 results", name="search")
    messages = json.loads((await agent.run("go")).all_messages_json())
    exported = tmp_path / "messages.json"
    exported.write_text(json.dumps(messages, indent=indent))

    done = cli("scan", str(exported))

    assert done.returncode == 2
    assert done.stderr.strip().endswith("in a format loopfuse reads (JSON of another shape)")
