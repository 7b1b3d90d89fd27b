"""Import hygiene, each in a fresh interpreter: no framework unless its adapter is imported."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

FRAMEWORKS = (
    "langchain",
    "langgraph",
    "agents",
    "pydantic_ai",
    "claude_agent_sdk",
    "google.adk",
    "smolagents",
    "fastmcp",
    "mcp",
    "redis",
    "opentelemetry",
)

BLOCKER = """
import sys
from importlib.abc import MetaPathFinder

class Block(MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ImportError(f"No module named {name!r} (hidden by the test)")
        return None

sys.meta_path.insert(0, Block())
"""


def run_python(code: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )


def test_import_loopfuse_imports_no_adapter_and_no_framework() -> None:
    probe = run_python(f"""
        import json, sys
        import loopfuse
        names = {list(FRAMEWORKS)!r}
        loaded = [m for m in sys.modules if m.startswith("loopfuse.adapters")
                  or any(m == n or m.startswith(n + ".") for n in names)]
        print(json.dumps(loaded))
    """)
    assert probe.returncode == 0, probe.stderr
    assert json.loads(probe.stdout) == []


@pytest.mark.parametrize(
    ("module", "hidden", "extra"),
    [
        ("loopfuse.adapters.langchain", ["langchain", "langgraph"], "loopfuse[langchain]"),
        ("loopfuse.adapters.langchain", ["langgraph"], "loopfuse[langchain]"),
        ("loopfuse.adapters.openai_agents", ["agents"], "loopfuse[openai-agents]"),
        ("loopfuse.adapters.pydantic_ai", ["pydantic_ai"], "loopfuse[pydantic-ai]"),
    ],
)
@pytest.mark.slow
def test_adapter_without_its_framework_names_the_extra(module: str, hidden: list[str], extra: str) -> None:
    probe = run_python(f"""
        BLOCKED = {hidden!r}
        {textwrap.indent(BLOCKER, "        ").strip()}
        try:
            import {module}
        except ImportError as exc:
            print(exc)
        else:
            print("imported")
    """)
    assert probe.returncode == 0, probe.stderr
    assert f"pip install '{extra}'" in probe.stdout
