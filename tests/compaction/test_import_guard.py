"""The LangChain module names its extra when LangChain is missing; the core never imports it."""

from __future__ import annotations

import subprocess
import sys


def python(code: str) -> str:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    return out.stdout.strip()


def test_missing_langchain_raises_import_error_naming_the_extra() -> None:
    code = (
        "import sys; sys.modules['langchain'] = None\n"
        "try:\n    import loopfuse.adapters.langchain\n"
        "except ImportError as exc:\n    print(exc)"
    )
    assert "pip install 'loopfuse[langchain]'" in python(code)


def test_importing_loopfuse_and_its_tracker_never_imports_langchain() -> None:
    code = "import sys, loopfuse, loopfuse.compaction; print('langchain' in sys.modules)"
    assert python(code) == "False"
