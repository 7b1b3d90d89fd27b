"""Each reader on its fixtures; damaged files; folders mixing formats; the dev corpus."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from loopfuse.analysis.transcripts.codex import _output
from loopfuse.transcripts.base import EXCERPT_CHARS, ReadTally
from loopfuse.transcripts.detect import read_path, read_source, sniff, sources
from loopfuse.transcripts.normalized import read_normalized


def calls_of(path: Path, tally: ReadTally | None = None) -> list[Any]:
    return list(read_path(path, tally))


def test_claude_code_main_agent_and_sidechains_are_separate_agents(fixtures: Path) -> None:
    folder = fixtures / "claude_code" / "-home-alice-proj"
    main = calls_of(folder / "6c073d8e-2bb1-45cb-90bc-a28ce44da090.jsonl")
    assert [c.tool for c in main] == ["Bash"] * 4 + ["Task", "Grep", "Read"]
    assert {c.agent for c in main} == {"main", "sidechain-s1"}
    assert main[0].args["command"] == "pytest -q tests/test_app.py"
    assert main[0].ok is False and main[0].result == "1 failed, 3 passed in 0.12s"
    assert main[5].result == "src/app.py:12: def load_config():"
    assert main[0].run == "6c073d8e-2bb1-45cb-90bc-a28ce44da090"
    assert main[1].time is not None and main[1].time - main[0].time == 10
    agent_file = calls_of(folder / "agent-d2969342.jsonl")
    assert [(c.agent, c.tool, c.run) for c in agent_file] == [
        ("sidechain-d2969342", "Glob", "6c073d8e-2bb1-45cb-90bc-a28ce44da090")
    ]


def test_codex_rollouts_current_and_legacy(fixtures: Path) -> None:
    current = calls_of(next((fixtures / "codex/sessions/2025/12/08").iterdir()))
    assert [c.tool for c in current] == ["shell", "shell", "shell", "apply_patch"]
    assert current[0].args["command"] == ["bash", "-lc", "cargo test"]
    assert [c.ok for c in current] == [False, False, False, True]
    assert current[0].run == "0199a1b2-7c3d-7e4f-9a0b-1c2d3e4f5a6b"
    legacy = calls_of(next((fixtures / "codex/sessions/2025/07/01").iterdir()))
    assert [(c.tool, c.args, c.ok) for c in legacy] == [("shell", {"command": ["ls", "-la"]}, True)]


def test_gemini_session_and_checkpoint(fixtures: Path) -> None:
    root = fixtures / "gemini/tmp/8876362f5a5f"
    session = calls_of(next((root / "chats").iterdir()))
    assert [c.tool for c in session] == ["run_shell_command"] * 3 + ["replace"]
    assert session[3].ok is False and session[3].result.startswith("Failed to edit")
    assert session[0].run == "477739d0-1b78-4aa7-9116-02d08c952344"
    checkpoint = calls_of(root / "checkpoints/checkpoint-mytag.json")
    assert [(c.tool, c.ok) for c in checkpoint] == [("list_directory", None), ("read_file", False)]


def test_gemini_recordings_as_json_lines_keep_the_latest_copy_of_each_message(fixtures: Path) -> None:
    """Since March 2026 a recording is appended to, each message written again as it changes;
    read as one document, every such file was skipped as malformed JSON."""
    root = fixtures / "gemini/tmp/5eb97eaf/chats"
    session = calls_of(root / "session-2026-10-07T10-00-3f0c2a1e.jsonl")
    assert [(c.tool, c.ok) for c in session] == [
        ("run_shell_command", False),
        ("read_file", True),
        ("read_file", True),
    ]
    assert session[0].result == "1 failed, 3 passed"  # the copy written once the call failed
    assert session[1].args == {"absolute_path": "/home/dev/proj/app.py"}  # rewound, but made
    assert {c.run for c in session} == {"3f0c2a1e-9b7d-4c55-8e21-6a4d2b9c0f11"}
    assert sniff(root / "session-2026-10-07T10-00-3f0c2a1e.jsonl") == "gemini"
    sub_agent = calls_of(root / "3f0c2a1e-9b7d-4c55-8e21-6a4d2b9c0f11/k3x9q1.jsonl")
    assert [(c.run, c.tool, c.result) for c in sub_agent] == [("k3x9q1", "google_web_search", "3 results")]


def test_a_gemini_recording_larger_than_a_document_may_be_is_skipped(
    fixtures: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its messages are kept until the end of the file, so it is bounded as a document is."""
    import loopfuse.analysis.transcripts.gemini as gemini

    monkeypatch.setattr(gemini, "MAX_DOCUMENT_BYTES", 1024)
    tally = ReadTally()
    assert (
        calls_of(fixtures / "gemini/tmp/5eb97eaf/chats/session-2026-10-07T10-00-3f0c2a1e.jsonl", tally) == []
    )
    assert tally.too_large == 1


def test_codex_unified_exec_envelopes_and_hosted_web_searches(fixtures: Path) -> None:
    """The envelope's random chunk id made every run's result new, its exit code was not read,
    and a web search (no id, no output) was dropped."""
    rollout = calls_of(next((fixtures / "codex/sessions/2026/10/06").iterdir()))
    assert [c.tool for c in rollout] == ["exec_command", "web_search", "exec_command", "exec_command"]
    assert [(c.result, c.ok) for c in rollout] == [
        ("1 failed, 3 passed", False),
        (None, None),
        ("   Compiling app v0.1.0", None),  # still running: no exit code yet
        ("4 passed", True),
    ]
    assert rollout[1].args == {"type": "search", "query": "pytest add returns wrong sign"}
    truncated = "Exit code: 0\nWall time: 1.2 seconds\nTotal output lines: 300\nOutput:\nhello"
    assert _output(truncated) == ("hello", True)


def test_a_claude_code_session_opening_with_hook_records_is_read(fixtures: Path) -> None:
    """CLI 2.1 may open a session with its permission mode and a record per SessionStart hook:
    with five such lines first, the session was skipped as JSON of another shape."""
    path = fixtures / "claude_code_2_1/77777777-1111-4000-8000-000000000007.jsonl"
    assert sniff(path) == "claude-code"
    assert [(c.tool, c.ok, c.result) for c in calls_of(path)] == [
        ("Bash", False, "Tests: 1 failed, 9 passed")
    ]


def test_openai_and_anthropic_messages(fixtures: Path) -> None:
    weather = calls_of(fixtures / "chat/openai-weather.json")
    assert [(c.tool, c.args) for c in weather] == [
        ("get_weather", {"location": "Paris, France"}),
        ("get_weather", {"location": "Paris, France"}),
        ("get_time", {"tz": "Europe/Paris"}),
    ]
    assert weather[2].result == "10:00"
    conversations = calls_of(fixtures / "chat/openai-conversations.jsonl")
    assert len({c.run for c in conversations}) == 2
    assert [(c.args["q"], c.result) for c in conversations if c.tool == "search"] == [
        ("cats", "c"),
        ("kittens", "k"),
    ]
    anthropic = calls_of(fixtures / "chat/anthropic-messages.json")
    assert [(c.args["location"], c.ok) for c in anthropic] == [
        ("San Francisco, CA", None),
        ("Atlantis", False),
    ]


def test_swe_agent_0x_1x_and_mini(fixtures: Path) -> None:
    old = calls_of(fixtures / "swe_agent/marshmallow-code__marshmallow-1867.traj")
    assert [c.tool for c in old] == ["find_file", "open", "edit", "bash", "submit"]
    assert old[2].ok is False and old[3].args == {"command": "python reproduce.py"}
    assert {c.agent for c in old} == {"primary"}
    new = calls_of(fixtures / "swe_agent/astropy__astropy-12907.traj")
    assert [c.tool for c in new] == ["str_replace_editor", "bash", "bash", "submit"]
    assert [c.ok for c in new] == [None, False, False, None]
    assert new[-1].time == 8.0
    mini = calls_of(fixtures / "mini_swe_agent/sympy__sympy-20590.traj.json")
    assert [c.tool for c in mini] == ["bash"] * 4
    assert [c.ok for c in mini] == [True, False, False, True]
    assert mini[0].run == "sympy__sympy-20590"


def test_openhands_list_event_folder_and_sdk(fixtures: Path) -> None:
    exported = calls_of(fixtures / "openhands/trajectory-fix-test.json")
    assert [c.tool for c in exported] == ["execute_bash"] * 3 + ["read"]
    assert "thought" not in exported[0].args and exported[0].ok is False
    folder = calls_of(fixtures / "openhands/sessions")
    assert [(c.run, c.tool) for c in folder] == [("5f1c2a", "execute_bash")] * 2
    sdk = calls_of(fixtures / "openhands/sdk-conversation.jsonl")
    assert [(c.tool, c.args, c.result, c.ok) for c in sdk] == [
        ("execute_bash", {"command": "ls"}, "a.txt", True)
    ]


def test_detection_is_by_content_not_name(fixtures: Path, tmp_path: Path) -> None:
    renamed = tmp_path / "whatever.log"
    shutil.copy(
        fixtures
        / "codex/sessions/2025/07/01"
        / next((fixtures / "codex/sessions/2025/07/01").iterdir()).name,
        renamed,
    )
    assert sniff(renamed) == "codex"
    pretty = tmp_path / "x.data"
    shutil.copy(
        fixtures
        / "gemini/tmp/8876362f5a5f/chats"
        / next((fixtures / "gemini/tmp/8876362f5a5f/chats").iterdir()).name,
        pretty,
    )
    assert sniff(pretty) == "gemini"
    (tmp_path / "notes.txt").write_text("hello\n")
    assert sniff(tmp_path / "notes.txt") is None


def test_a_folder_mixing_every_format(fixtures: Path) -> None:
    tally = ReadTally()
    found = list(sources([fixtures], tally))
    formats = {s.format for s in found}
    assert {
        "claude-code",
        "codex",
        "gemini",
        "chat-json",
        "chat-jsonl",
        "swe-agent",
        "mini-swe-agent",
    } <= formats
    assert {"openhands-json", "openhands-jsonl", "openhands-events", "normalized"} <= formats
    assert tally.unknown_files == 1  # the README
    assert sum(1 for _ in read_path(fixtures)) == 62


def test_a_line_with_a_byte_that_is_not_utf8_is_read_with_a_replacement_character(
    fixtures: Path, tmp_path: Path
) -> None:
    """A command's output with a stray byte (a binary file printed): the whole line, and with it
    the call's result, had been dropped as malformed."""
    source = fixtures / "claude_code/-home-alice-proj/6c073d8e-2bb1-45cb-90bc-a28ce44da090.jsonl"
    damaged = tmp_path / "damaged.jsonl"
    damaged.write_bytes(source.read_bytes().replace(b"1 failed, 3 passed", b"1 failed\xff, 3 passed"))
    tally = ReadTally()
    calls = calls_of(damaged, tally)
    assert [c.result for c in calls] == [
        c.result.replace("1 failed", "1 failed\ufffd") if c.result else c.result for c in calls_of(source)
    ]
    assert tally.malformed == 0


def test_truncated_jsonl_keeps_the_complete_lines(fixtures: Path, tmp_path: Path) -> None:
    source = fixtures / "claude_code/-home-alice-proj/6c073d8e-2bb1-45cb-90bc-a28ce44da090.jsonl"
    data = source.read_bytes()
    cut = tmp_path / "cut.jsonl"
    cut.write_bytes(data[: data.rindex(b"toolu_03") + 10])  # inside the last result line
    tally = ReadTally()
    calls = calls_of(cut, tally)
    assert [c.tool for c in calls] == ["Bash"] * 4
    assert calls[3].result is None  # its result was cut off
    assert tally.malformed == 1


def test_corrupted_lines_are_skipped_and_counted(fixtures: Path, tmp_path: Path) -> None:
    source = next((fixtures / "codex/sessions/2025/12/08").iterdir())
    lines = source.read_text().splitlines(keepends=True)
    lines.insert(5, '{"type":"response_item","payload":{"type":"function_call" BROKEN\n')
    lines.insert(2, "\x00\x01 not json _call\n")
    broken = tmp_path / "rollout.jsonl"
    broken.write_text("".join(lines))
    tally = ReadTally()
    assert [c.tool for c in calls_of(broken, tally)] == ["shell", "shell", "shell", "apply_patch"]
    assert tally.malformed == 2


def test_truncated_document_is_counted_not_fatal(fixtures: Path, tmp_path: Path) -> None:
    source = fixtures / "swe_agent/marshmallow-code__marshmallow-1867.traj"
    cut = tmp_path / "cut.traj"
    cut.write_text(source.read_text()[:700])
    tally = ReadTally()
    assert calls_of(cut, tally) == []
    assert tally.malformed == 1


def test_swe_agent_0x_reader_matches_the_normalized_corpus(corpus: Path) -> None:
    for name in ("django__django-11019", "django__django-11039", "pallets__flask-4992"):
        raw = calls_of(corpus / "raw" / f"{name}.traj")
        normalized = list(read_normalized(corpus / f"coder__{name}.jsonl"))
        assert len(raw) == len(normalized) > 30
        fields = [(c.agent, c.step, c.tool, c.args, c.result, c.ok) for c in raw]
        assert fields == [(c.agent, c.step, c.tool, c.args, c.result, c.ok) for c in normalized]
        assert any(len(c.result or "") > EXCERPT_CHARS for c in normalized)  # the whole output


@pytest.mark.parametrize(
    "relative",
    [
        "claude_code/-home-alice-proj/6c073d8e-2bb1-45cb-90bc-a28ce44da090.jsonl",
        "gemini/tmp/8876362f5a5f/checkpoints/checkpoint-mytag.json",
        "swe_agent/astropy__astropy-12907.traj",
        "normalized/example.jsonl",
        "openhands/sessions/5f1c2a",
    ],
)
def test_readers_report_every_byte_they_read(fixtures: Path, relative: str) -> None:
    path = fixtures / relative
    seen: list[int] = []
    tally = ReadTally(progress=seen.append)
    (source,) = list(sources([path], tally))
    assert list(read_source(source, tally))
    files = [path] if path.is_file() else list((path / "events").iterdir())
    assert sum(seen) == tally.bytes_read == sum(f.stat().st_size for f in files)


def test_progress_comes_while_a_big_file_streams(tmp_path: Path) -> None:
    """Bytes are reported as reading goes: between two calls of one file, not only at its end."""
    call = '{"type":"assistant","sessionId":"s","message":{"content":[{"type":"tool_use","id":"t%d","name":"Read","input":{"n":%d}}]}}\n'
    result = '{"type":"user","sessionId":"s","message":{"content":[{"type":"tool_result","tool_use_id":"t%d","content":"%s"}]}}\n'
    big = tmp_path / "session.jsonl"
    big.write_text("".join(call % (i, i) + result % (i, "x" * 1000) for i in range(3000)))
    seen: list[int] = []
    tally = ReadTally(progress=seen.append)
    (source,) = list(sources([big], tally))
    reported_at_each_call = [sum(seen) for _ in read_source(source, tally)]
    size = big.stat().st_size
    assert len({r for r in reported_at_each_call if 0 < r < size}) >= 5
    assert sum(seen) == size


def test_a_result_of_json_blocks_is_kept_to_the_result_limit_not_the_excerpt() -> None:
    from loopfuse.analysis.transcripts.base import RESULT_CHARS, excerpt

    block = {"type": "json", "rows": list(range(200))}
    assert len(excerpt([block], RESULT_CHARS) or "") > EXCERPT_CHARS
    assert len(excerpt([block]) or "") == EXCERPT_CHARS
