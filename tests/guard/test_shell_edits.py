"""A shell command that changes files is an edit: a passing check re-run after each one is honest
work, on both stores (an agent with only a shell tool had its 8th re-run refused)."""

from __future__ import annotations

import pytest

from loopfuse import Guard
from loopfuse.breakers._rerun import writes_files
from tests.store_fixtures import GuardFactory

from .conftest import run

SHELL_EDITS = [
    "sed -i 's/old_{n}/new_{n}/g' src/app.py",
    'cat >> modules/sqs/main.tf <<\'EOF\'\nresource "aws_sqs_queue" "q_{n}" {{}}\nEOF',
    "apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: src/app.py\n+x_{n} = 1\n*** End Patch\nEOF",
    "git mv src/mod_{n}.py src/pkg/mod_{n}.py",
]


def _edits_then_check(guard: Guard, edit: str, rounds: int, edit_answer: str = "") -> int:
    """Rounds of a shell edit answering ``edit_answer`` and a passing check; how many ran."""
    for n in range(rounds):
        letters = chr(97 + n % 26) + chr(97 + n // 26)
        command = {"command": edit.format(n=letters)}
        check = {"command": "pytest -q"}
        if not (
            run(guard, "bash", command, edit_answer, ok=True)
            and run(guard, "bash", check, "40 passed", ok=True)
        ):
            return n
    return rounds


@pytest.mark.parametrize("edit", SHELL_EDITS)
def test_a_passing_check_after_each_shell_edit_is_never_refused(make_guard: GuardFactory, edit: str) -> None:
    assert _edits_then_check(make_guard(), edit, 30) == 30


def test_a_shell_edit_answering_the_same_text_each_time_is_still_an_edit(make_guard: GuardFactory) -> None:
    answer = "Success. Updated the following files:\nM src/app.py"
    assert _edits_then_check(make_guard(), SHELL_EDITS[2], 30, answer) == 30


def test_a_command_that_changes_nothing_brings_nothing_new(make_guard: GuardFactory) -> None:
    """Reading a file between checks is no edit: the 8th passing check is refused (result_limit 7)."""
    assert _edits_then_check(make_guard(), "grep -n old_{n} src/app.py", 30) == 7


def test_no_edit_tools_means_no_shell_edits_either(make_guard: GuardFactory) -> None:
    guard = make_guard({"stall": {"edit_tools": []}})
    assert _edits_then_check(guard, SHELL_EDITS[0], 30) == 7


@pytest.mark.parametrize(
    ("command", "writes"),
    [
        ("sed -i.bak 's/a/b/' f", True),
        ("perl -pi -e 's/a/b/' f", True),
        ('printf "%s" x > "out file.txt"', True),
        ("python gen.py | tee out.txt", True),
        ("patch -p1 < fix.diff", True),
        ("cd /repo && rm -f build/x", True),
        ("pip install requests", True),
        ("sed -n 1,20p f.py", False),
        ("python -m app 2>&1 | head", False),
        ("grep -n foo src/ > /dev/null", False),
        ("git diff && git status", False),
        ("psql -c 'select * from t where a >= 3'", False),
    ],
)
def test_which_commands_change_files(command: str, writes: bool) -> None:
    from loopfuse._calls import CallKey

    key = CallKey.of("bash", {"command": command})
    assert key is not None and writes_files(key.text) is writes
