from __future__ import annotations

import subprocess
import sys

import loopfuse


def test_all_is_sorted_and_complete() -> None:
    assert loopfuse.__all__ == sorted(loopfuse.__all__)
    for name in loopfuse.__all__:
        assert hasattr(loopfuse, name)


def test_contract_names_are_exported() -> None:
    for name in (
        "Guard",
        "Decision",
        "LoopBrake",
        "LoopBrakeError",
        "ConfigError",
        "wrap_execute",
        "decorate_tool",
    ):
        assert name in loopfuse.__all__


def test_import_pulls_in_no_third_party_module() -> None:
    code = (
        "import sys, loopfuse\n"
        "bad = [m for m in sys.modules if m.split('.')[0] in "
        "{'yaml','redis','langchain','langgraph','agents','pydantic_ai','claude_agent_sdk','google',"
        "'smolagents','fastmcp','mcp','opentelemetry','pydantic','httpx'} or m.startswith('loopfuse.adapters.')]\n"
        "print(bad)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_names_the_docs_import_from_submodules_are_exported_at_the_top() -> None:
    from loopfuse.compaction import RapidRefillTracker
    from loopfuse.listeners import GuardListener
    from loopfuse.supervise import Supervisor, SupervisorPolicy

    assert loopfuse.GuardListener is GuardListener
    assert loopfuse.Supervisor is Supervisor
    assert loopfuse.SupervisorPolicy is SupervisorPolicy
    assert loopfuse.RapidRefillTracker is RapidRefillTracker
