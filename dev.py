#!/usr/bin/env python3
"""Set up and run loopfuse's jobs with nothing but Python 3.11+.

    python3 dev.py demo    # set up, then replay the bundled example runs through the guard
    python3 dev.py check   # set up with every extra, then ruff, mypy --strict, the docs and pytest

Setup makes ./.venv with the Python running this script and installs the package editable
into it; it is redone only when pyproject.toml changes, or made again when another Python
version made it (`python3.13 dev.py check` checks on 3.13). Extra arguments after `check` go
to pytest.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PY = BIN / "python"


def run(*cmd: str | Path) -> None:
    print("+", " ".join(str(c) for c in cmd), flush=True)
    subprocess.run([str(c) for c in cmd], cwd=ROOT, check=True)


def made_by_this_python(venv_dir: Path) -> bool:
    """Whether ``venv_dir`` was made by this Python's version (major.minor, from its pyvenv.cfg)."""
    try:
        lines = (venv_dir / "pyvenv.cfg").read_text().splitlines()
    except OSError:
        return False
    this = "{}.{}.".format(*sys.version_info[:2])
    for line in lines:  # "version = 3.11.7" (venv), "version_info = 3.11.7" (uv, virtualenv)
        key, _, value = line.partition("=")
        if key.strip() in ("version", "version_info") and value.strip().startswith(this):
            return True
    return False


def setup(extras: str) -> None:
    stamp = VENV / f".loopfuse-{extras or 'core'}"
    digest = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()
    ours = made_by_this_python(VENV)
    if ours and stamp.exists() and stamp.read_text() == digest:
        return
    if PY.exists() and not ours:
        print(f"+ .venv was made by another Python: making it again with Python {sys.version.split()[0]}")
        venv.create(VENV, with_pip=True, clear=True)
    elif not PY.exists():
        venv.create(VENV, with_pip=True)
    target = f".[{extras}]" if extras else "."
    run(PY, "-m", "pip", "install", "--disable-pip-version-check", "-q", "-e", target)
    stamp.write_text(digest)


def demo() -> None:
    setup("")
    run(
        BIN / "loopfuse",
        "replay",
        "examples/search_loop.jsonl",
        "examples/healthy_fix.jsonl",
        "--config",
        "examples/loopfuse.toml",
    )


def check(pytest_args: list[str]) -> None:
    setup("all,dev")
    run(BIN / "ruff", "check", "src", "tests", "bench", "dev.py")
    run(BIN / "ruff", "format", "--check", "src", "tests", "bench", "dev.py")
    run(BIN / "mypy")
    run(BIN / "mkdocs", "build", "--strict", "--site-dir", ROOT / "site")
    run(PY, "-m", "pytest", *pytest_args)


def main() -> None:
    job = sys.argv[1] if len(sys.argv) > 1 else ""
    try:
        if job == "demo":
            demo()
        elif job == "check":
            check(sys.argv[2:])
        else:
            sys.exit(__doc__)
    except subprocess.CalledProcessError as exc:
        sys.exit(exc.returncode)


if __name__ == "__main__":
    main()
