"""Each adapter needs its extra; ``import loopfuse`` imports none of them."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

BLOCKER = """
import importlib.abc, sys
class Blocker(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == {top!r} or name.startswith({top!r} + "."):
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None
sys.meta_path.insert(0, Blocker())
try:
    import loopfuse.adapters.{module}
except ImportError as exc:
    print(exc)
else:
    print("imported")
"""

CASES = [
    ("claude_agent_sdk", "claude_agent_sdk", "claude-agent-sdk"),
    ("google_adk", "google.adk", "google-adk"),
    ("smolagents", "smolagents", "smolagents"),
]


def run_python(code: str) -> str:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=env, check=True
    )
    return done.stdout.strip()


@pytest.mark.parametrize(("module", "framework", "extra"), CASES)
def test_an_adapter_without_its_framework_names_its_extra(module: str, framework: str, extra: str) -> None:
    out = run_python(BLOCKER.format(top=framework, module=module))

    assert f"pip install 'loopfuse[{extra}]'" in out


def test_import_loopfuse_imports_none_of_these_adapters() -> None:
    names = [f"loopfuse.adapters.{m}" for m, _, _ in CASES] + [f for _, f, _ in CASES]
    code = f"import sys, loopfuse; print([n for n in {names!r} if n in sys.modules])"

    assert run_python(code) == "[]"
