"""A shell tool is many tools: its failures count per program, on both stores. Ten greps finding
nothing made every later shell call fail `same_error.limit`, so a shell-only agent (Codex) was
stopped."""

from __future__ import annotations

from typing import Any

import pytest

from loopfuse import Guard
from loopfuse.breakers._scope import error_scope
from tests.store_fixtures import GuardFactory

from .conftest import run

NAMES = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa", "lambda"]
NOTHING = '{"metadata": {"exit_code": 1}, "output": ""}'


def _claude(command: str) -> dict[str, Any]:
    return {"command": f"cd /repo && {command}", "description": "check"}


def _codex(command: str) -> dict[str, Any]:
    return {"command": ["bash", "-lc", command], "workdir": "/repo"}


def _wrapped(command: str) -> dict[str, Any]:
    return {"command": f"(cd /repo && timeout 60 bash -lc '{command}')"}


def _listed(command: str) -> dict[str, Any]:
    return {"command": ["/usr/bin/env", "bash", "--login", "-c", command]}


@pytest.mark.parametrize("form", [_claude, _codex, _wrapped, _listed])
def test_ten_greps_finding_nothing_leave_the_other_programs_alone(
    make_guard: GuardFactory, form: Any
) -> None:
    guard = make_guard()
    greps = [
        run(guard, "shell", form(f"grep -rn 'old_{name}_api' src/"), NOTHING, ok=False) for name in NAMES
    ]
    assert greps == [True] * 10 + [False]  # same_error.limit 10: grep failed alike 10 times in a row
    assert run(guard, "shell", form("pytest -q"), "14 passed in 0.31s", ok=True)


def test_a_programs_scope_is_its_first_step_past_setup() -> None:
    identity = Guard()._identity

    def scope(tool: str, args: dict[str, Any]) -> str:
        call = identity.key(tool, args)
        assert call is not None
        return error_scope(call)

    assert scope("Bash", _claude("pytest -q 2>&1 | tail -20")) == "Bash pytest"
    assert scope("shell", _codex("FOO=1 sudo /usr/bin/python3 x.py")) == "shell python3"
    assert scope("shell", {"command": ["rg", "-n", "x"]}) == "shell rg"
    assert scope("Bash", {"command": "cd /repo"}) == "Bash"
    assert scope("search", {"q": "grep -rn x"}) == "search"
    assert scope("Bash", {"command": "sudo -u dev env -i PATH=/bin grep x"}) == "Bash grep"
    runs = ["python -m pytest -x", "uv run pytest", "npx jest --ci", "sh -c 'make test'", "echo 1 | wc -l"]
    assert [scope("Bash", {"command": c}) for c in runs] == [
        "Bash pytest",
        "Bash pytest",
        "Bash jest",
        "Bash make",
        "Bash echo",
    ]
