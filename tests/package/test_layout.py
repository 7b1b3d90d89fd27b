"""The package layout: the runtime at the top, offline analysis in ``loopfuse.analysis``,
incidents and listeners in their packages. Every import path that worked before the move
still works and gives the same objects; the runtime never imports the analysis code."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

import loopfuse

SRC = Path(loopfuse.__file__).resolve().parent

# Old import path -> (where the names live now, the names the old path has always had).
MOVED: dict[str, tuple[str, tuple[str, ...]]] = {
    # runtime internals, private modules since the httpx-style layout
    "loopfuse.agents": (
        "loopfuse._agents",
        (
            "ID_ATTRIBUTES",
            "AgentIdentityError",
            "agent_label",
            "agent_name",
        ),
    ),
    "loopfuse.brake": (
        "loopfuse._brake",
        (
            "LoopBrake",
            "decorate_tool",
            "wrap_execute",
        ),
    ),
    "loopfuse.calls": (
        "loopfuse._calls",
        (
            "CallKey",
            "call_digest",
            "canonical_json",
            "strip_ignored",
        ),
    ),
    "loopfuse.config_files": ("loopfuse._config_files", ("load_config_file",)),
    "loopfuse.escalation": (
        "loopfuse._escalation",
        (
            "escalation_point",
            "first_denied_repeat",
        ),
    ),
    "loopfuse.messages": (
        "loopfuse._messages",
        (
            "DEFAULT_MESSAGES",
            "RULE_MESSAGES",
            "STORE_DENIED",
            "denial_message",
        ),
    ),
    "loopfuse.overrides": (
        "loopfuse._overrides",
        (
            "Overrides",
            "allow_next_logged",
            "paused_logged",
        ),
    ),
    "loopfuse.state": (
        "loopfuse._state",
        (
            "AgentResults",
            "AgentState",
            "CountingWindow",
            "CycleTrack",
            "RecentDigests",
            "ResultBook",
            "ToolResult",
        ),
    ),
    "loopfuse.stats": ("loopfuse._stats", ("GuardStats",)),
    "loopfuse.untrusted": (
        "loopfuse._untrusted",
        (
            "BAD_TOOL",
            "error_text",
            "is_exception",
            "tool_name",
            "tool_result",
        ),
    ),
    "loopfuse.volatile": (
        "loopfuse._volatile",
        (
            "ERROR_MASKS",
            "MASKS",
            "RESULT_MASKS",
            "int_digest",
            "pair_key",
            "result_digest",
            "result_digests",
        ),
    ),
    "loopfuse.wrapping": (
        "loopfuse._wrapping",
        (
            "CURRENT_SESSION",
            "abort_error",
            "agent_session",
            "call_arguments",
            "current_agent",
            "guarded",
            "refusal_text",
            "run_before",
            "warned",
        ),
    ),
    "loopfuse.incidents": ("loopfuse.incidents._log", ("IncidentLog", "incident_record", "logger")),
    "loopfuse.listeners": ("loopfuse.listeners._base", ("GuardListener",)),
    "loopfuse.incident_reader": ("loopfuse.incidents._reader", ("IncidentReader",)),
    "loopfuse.supervise": (
        "loopfuse.incidents._supervisor",
        (
            "Action",
            "ActionKind",
            "DEFAULT_GRACE",
            "Gap",
            "GiveUp",
            "IncidentReader",
            "Interrupt",
            "Redispatch",
            "Supervisor",
            "SupervisorPolicy",
            "Trip",
            "give_up_note",
            "logger",
            "redispatch_note",
        ),
    ),
    "loopfuse.otel": (
        "loopfuse.listeners.otel",
        ("FAIL_OPEN_EVENT", "OpenTelemetryListener", "SPAN_EVENT", "instrument"),
    ),
    "loopfuse.replay": ("loopfuse.analysis.replay", ("AgentReplay", "ReplayDenial", "replay_calls")),
    "loopfuse.scanstats": (
        "loopfuse.analysis.scanstats",
        (
            "COUNT_CAP",
            "CallStats",
            "LABEL_ARGS",
            "LOOP_CYCLE",
            "LOOP_RUN",
            "LOOP_RUN_CHANGING",
            "RunStats",
            "SUSPECT_CYCLE",
            "SUSPECT_REPEATS",
            "SUSPECT_RUN",
            "TIMELINE_LANES",
            "TIMELINE_POINTS",
            "scan_calls",
            "worst_first",
        ),
    ),
    "loopfuse.evaluation": (
        "loopfuse.analysis.evaluation",
        (
            "Comparison",
            "Corpus",
            "Detector",
            "Fold",
            "GRID",
            "Grid",
            "GuardFactory",
            "Labeled",
            "Score",
            "TrajectoryResult",
            "anchors",
            "baselines",
            "compare",
            "config_for",
            "format_corpora",
            "format_corpus_table",
            "format_loco",
            "format_table",
            "guard_detector",
            "identical_failures",
            "identical_in_a_row",
            "identical_pairs",
            "is_invalid",
            "load_corpora",
            "load_corpus",
            "loco",
            "merge",
            "repeated_in_window",
            "score",
            "score_corpora",
            "score_detector",
            "score_many",
            "verdict",
            "without_invalid",
        ),
    ),
    "loopfuse.scanreport": ("loopfuse.analysis.scanreport", ("Markers", "render_html", "timeline_svg")),
    "loopfuse.transcripts": ("loopfuse.analysis.transcripts", ()),
    "loopfuse.scanreport.assets": ("loopfuse.analysis.scanreport.assets", ("CSS", "SCRIPT")),
    "loopfuse.scanreport.chart": ("loopfuse.analysis.scanreport.chart", ("timeline_svg",)),
    "loopfuse.scanreport.page": ("loopfuse.analysis.scanreport.page", ("Markers", "render_html")),
    "loopfuse.transcripts.base": (
        "loopfuse.analysis.transcripts.base",
        (
            "CallQueue",
            "EXCERPT_CHARS",
            "MAX_DOCUMENT_BYTES",
            "REPORT_BYTES",
            "ReadTally",
            "excerpt",
            "json_lines",
            "load_document",
            "parse_arguments",
            "parse_time",
        ),
    ),
    "loopfuse.transcripts.claude_code": (
        "loopfuse.analysis.transcripts.claude_code",
        ("looks_claude_code", "read_claude_code"),
    ),
    "loopfuse.transcripts.codex": ("loopfuse.analysis.transcripts.codex", ("looks_codex", "read_codex")),
    "loopfuse.transcripts.detect": (
        "loopfuse.analysis.transcripts.detect",
        (
            "DEFAULT_FOLDERS",
            "EMPTY",
            "NOT_JSON",
            "OTHER_JSON",
            "READERS",
            "Reader",
            "Source",
            "default_folders",
            "identify",
            "read_path",
            "read_paths",
            "read_source",
            "sniff",
            "sources",
        ),
    ),
    "loopfuse.transcripts.gemini": ("loopfuse.analysis.transcripts.gemini", ("read_gemini",)),
    "loopfuse.transcripts.messages": (
        "loopfuse.analysis.transcripts.messages",
        ("looks_message", "read_messages_document", "read_messages_lines"),
    ),
    "loopfuse.transcripts.model": ("loopfuse.analysis.transcripts.model", ("ToolCall",)),
    "loopfuse.transcripts.normalized": (
        "loopfuse.analysis.transcripts.normalized",
        ("looks_normalized", "read_normalized", "row_call"),
    ),
    "loopfuse.transcripts.openhands": (
        "loopfuse.analysis.transcripts.openhands",
        (
            "event_files",
            "looks_openhands",
            "read_openhands_document",
            "read_openhands_events",
            "read_openhands_lines",
        ),
    ),
    "loopfuse.transcripts.swe_agent": (
        "loopfuse.analysis.transcripts.swe_agent",
        ("SWE_AGENT_COMMANDS", "read_mini_swe_agent", "read_swe_agent", "swe_agent_ok", "swe_agent_tool"),
    ),
    "loopfuse.transcripts.tally": (
        "loopfuse.analysis.transcripts.tally",
        ("ReadTally", "SKIPPED_LIST_LIMIT", "Skipped"),
    ),
}
REEXPORTS = set(MOVED) - {"loopfuse.incidents", "loopfuse.listeners"}  # thin modules at the old paths
CHECKS_TOPICS = ("loopfuse.checks._validators", "loopfuse.checks._store_urls", "loopfuse.checks._redaction")


def _module(name: str) -> object:
    return importlib.import_module(name)


@pytest.mark.parametrize("old", sorted(MOVED))
def test_each_old_import_path_gives_the_same_objects(old: str) -> None:
    new, names = MOVED[old]
    before, after = _module(old), _module(new)
    for name in names:
        assert getattr(before, name) is getattr(after, name), f"{old}.{name}"


@pytest.mark.parametrize("old", sorted(REEXPORTS))
def test_each_old_import_path_exports_exactly_its_names(old: str) -> None:
    assert sorted(_module(old).__all__) == sorted(MOVED[old][1])  # type: ignore[attr-defined]


def test_the_old_import_paths_raise_no_warning() -> None:
    code = "import " + ", ".join(sorted(MOVED))
    subprocess.run([sys.executable, "-W", "error", "-c", code], check=True)


def test_checks_keeps_every_name_and_each_lives_in_one_topic() -> None:
    import loopfuse.checks as checks

    homes = {name: topic for topic in CHECKS_TOPICS for name in _module(topic).__all__}  # type: ignore[attr-defined]
    assert sorted(checks.__all__) == sorted(homes)
    for name, topic in homes.items():
        assert getattr(checks, name) is getattr(_module(topic), name)


def _import_targets(path: Path) -> list[str]:
    """The absolute names of the modules ``path`` imports."""
    package = ("loopfuse", *path.relative_to(SRC).parent.parts)
    targets = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            targets += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else ()
            targets.append(".".join((*base, *(node.module.split(".") if node.module else ()))))
    return targets


def _module_name(path: Path) -> str:
    parts = path.relative_to(SRC).with_suffix("").parts
    return ".".join(("loopfuse", *(parts[:-1] if parts[-1] == "__init__" else parts)))


def test_the_runtime_never_imports_the_analysis_code() -> None:
    offenders = []
    for path in sorted(SRC.rglob("*.py")):
        name = _module_name(path)
        if name.startswith(("loopfuse.analysis", "loopfuse.cli")) or name in REEXPORTS:
            continue  # the analysis itself, the CLI that uses it, and the old paths' re-exports
        offenders += [f"{name} -> {t}" for t in _import_targets(path) if t.startswith("loopfuse.analysis")]
    assert offenders == []


def test_the_package_imports_its_internals_by_their_private_paths() -> None:
    old_paths = REEXPORTS
    offenders = []
    for path in sorted(SRC.rglob("*.py")):
        name = _module_name(path)
        if name not in REEXPORTS:
            offenders += [f"{name} -> {t}" for t in _import_targets(path) if t in old_paths]
    assert offenders == []


def test_importing_loopfuse_imports_no_analysis_module() -> None:
    code = "import sys, loopfuse\nprint(sorted(m for m in sys.modules if m.startswith('loopfuse.analysis')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_every_module_stays_near_the_400_line_guideline() -> None:
    """The code style keeps modules under about 400 lines: past 420, split the module."""
    long = {
        str(path.relative_to(SRC)): n
        for path in SRC.rglob("*.py")
        if (n := len(path.read_text(encoding="utf-8").splitlines())) > 420
    }
    assert long == {}
