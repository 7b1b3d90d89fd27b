"""What a run of same errors belongs to: the tool, or for a shell tool the program its command
runs. A shell tool is many tools: ten ``grep`` calls finding nothing (exit status 1, no output)
say nothing about the ``pytest`` run after them, so ``same_error.limit`` and
``stall.tool_error_limit`` count a shell tool's failures per program (``grep``, ``pytest``)."""

from __future__ import annotations

import re

from .._calls import CallKey, json_object
from ._rerun import COMMAND_ARGUMENTS, runs_a_command

__all__ = ["error_scope"]

_PROGRAMS: dict[int, str | None] = {}  # by call key: a failing call is looked up on each check after it
_PROGRAMS_KEPT = 64
_UNKNOWN = ""
_READ = 16_384  # characters of a call's arguments parsed for its command (a script's text may be long)
_COMMAND_READ = 1_024  # characters of a command read for its program
_SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh"})
# A command list's steps ("cd /repo && pytest -q"), a pipeline's commands, a subshell's.
_STEP = re.compile(r"&&|\|\|?|;|\n|&|[(){}`]|\$\(")
_SETUP = frozenset({"cd", "export", "source", ".", "set", "unset", "pushd", "popd", "alias", "true"})
# Commands that run the command after them: their options (and the values of those listed), a
# timeout's duration, then the command.
_WRAPPERS = frozenset(
    {"sudo", "env", "time", "nohup", "exec", "nice", "timeout", "xargs", "command", "stdbuf"}
)
_VALUED = frozenset({"-u", "-g", "-n", "-k", "-s", "-C", "-I", "--user", "--group", "--signal"})
# Runners whose next word (after one of these words, for those that have them) is the program.
_RUNNERS: dict[str, frozenset[str]] = {
    "python": frozenset({"-m"}), "python3": frozenset({"-m"}), "uv": frozenset({"run"}),
    "poetry": frozenset({"run"}), "pipx": frozenset({"run"}), "npm": frozenset({"run", "exec"}),
    "pnpm": frozenset({"run", "exec", "dlx"}), "yarn": frozenset({"run", "exec", "dlx"}),
    "npx": frozenset(), "bunx": frozenset(), "go": frozenset({"run"}), "cargo": frozenset({"run"}),
}  # fmt: skip
_ASSIGNMENT = re.compile(r"\w+=")


def error_scope(call: CallKey) -> str:
    """``call``'s tool, or for a call running a shell command, the tool and the program it
    runs (``Bash`` and ``grep``), as ``"Bash grep"``."""
    program = _PROGRAMS.get(call.key, _UNKNOWN)
    if program is _UNKNOWN:
        if len(_PROGRAMS) >= _PROGRAMS_KEPT:
            _PROGRAMS.clear()
        program = _PROGRAMS[call.key] = _program(call.text) if runs_a_command(call.text) else None
    return call.tool if program is None else f"{call.tool} {program}"


def _program(text: str) -> str | None:
    """The program a call's command runs (its arguments' canonical JSON ``text``): the first
    command of its first step that is not setup (``cd``, ``export``, an assignment), past a
    wrapper (``sudo``, ``timeout 60``), inside a shell's ``-c`` script (``bash -lc "..."``, also
    as Codex's list), the program a runner runs (``python -m pytest``, ``npx jest``); None when
    no command is found."""
    args = json_object(text) if len(text) <= _READ else None
    command = next((args[name] for name in COMMAND_ARGUMENTS if name in args), None) if args else None
    if type(command) is list:
        command = " ".join(word for word in command if type(word) is str)
    return _first_program(command[:_COMMAND_READ], 0) if type(command) is str else None


def _first_program(command: str, depth: int) -> str | None:
    for step in _STEP.split(command):
        program = _program_of([word.strip("'\"") for word in step.split()], depth)
        if program is not None:
            return program
    return None


def _program_of(words: list[str], depth: int) -> str | None:
    """The program of one step's ``words``; None for a step that only sets up (``cd /repo``)."""
    at = 0
    while at < len(words) and (not words[at] or _ASSIGNMENT.match(words[at])):
        at += 1
    name = words[at].rsplit("/", 1)[-1][:64] if at < len(words) else ""
    if not name or name in _SETUP:
        return None
    if name in _WRAPPERS:
        return _program_of(_past_options(words[at + 1 :], name == "timeout"), depth)
    if name in _SHELLS and depth < 2:
        script = _script(words[at + 1 :])
        return name if script is None else _first_program(" ".join(script), depth + 1) or name
    if name in _RUNNERS:
        return _run_by(words[at + 1 :], _RUNNERS[name]) or name
    return name


def _past_options(words: list[str], duration: bool) -> list[str]:
    """``words`` past a wrapper's options (and their values), and a timeout's duration."""
    at = 0
    while at < len(words) and words[at].startswith("-"):
        at += 2 if words[at] in _VALUED else 1
    return words[at + 1 :] if duration else words[at:]


def _script(words: list[str]) -> list[str] | None:
    """The words of a shell's ``-c`` script (``-c``, ``-lc``, ``-ec``, ``--login -c``)."""
    for at, word in enumerate(words):
        if not word.startswith("-"):
            return None
        if not word.startswith("--") and "c" in word:
            return words[at + 1 :]
    return None


def _run_by(words: list[str], verbs: frozenset[str]) -> str | None:
    """The program a runner runs: the word after its verb (``-m``, ``run``), or for one with no
    verb (``npx``), its first word that is not an option."""
    if verbs:
        return words[1][:64] if len(words) > 1 and words[0] in verbs else None
    options = [word for word in words if not word.startswith("-")]
    return options[0][:64] if options else None
