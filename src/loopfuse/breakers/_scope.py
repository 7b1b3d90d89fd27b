"""What a run of same errors belongs to: the tool, or for a shell tool the program its command
runs. A shell tool is many tools: ten ``grep`` calls finding nothing (exit status 1, no output)
say nothing about the ``pytest`` run after them, so ``same_error.limit`` and
``stall.tool_error_limit`` count a shell tool's failures per program (``grep``, ``pytest``)."""

from __future__ import annotations

import re
from typing import Any

from .._calls import CallKey, json_object
from ._rerun import runs_a_command

__all__ = ["error_scope"]

_PROGRAMS: dict[int, str | None] = {}  # by call key: a failing call is looked up on each check after it
_PROGRAMS_KEPT = 64
_UNKNOWN = ""
_READ = 16_384  # characters of a call's arguments parsed for its command (a script's text may be long)
_ARGUMENTS = ("command", "cmd", "script", "commands")
_SHELLS = frozenset({"bash", "sh", "zsh", "dash", "/bin/bash", "/bin/sh", "/usr/bin/bash", "/bin/zsh"})
_STEP = re.compile(r"&&|\|\||;|\n")  # a command list's steps ("cd /repo && pytest -q")
_SETUP = frozenset({"cd", "export", "source", ".", "set", "pushd", "sudo", "time", "env", "nohup"})
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
    word of its first step that is not setup (``cd``, ``export``, an assignment), also inside
    ``bash -lc "..."`` as Codex sends it; None when no command is found."""
    args = json_object(text) if len(text) <= _READ else None
    command = next((args[name] for name in _ARGUMENTS if name in args), None) if args else None
    if type(command) is list:
        command = _unwrapped(command)
    return _first_program(command) if type(command) is str else None


def _unwrapped(argv: list[Any]) -> str | None:
    """A command given as a list: the script of ``["bash", "-lc", "..."]``, else the words."""
    words = [word for word in argv if type(word) is str]
    if len(words) >= 3 and words[0] in _SHELLS and words[1].startswith("-") and "c" in words[1]:
        return words[2]
    return " ".join(words) if words else None


def _first_program(command: str) -> str | None:
    for step in _STEP.split(command[:1_024]):
        words = [w for w in step.split() if _ASSIGNMENT.match(w) is None]
        while words and words[0] in _SETUP:
            words = words[1:] if words[0] in ("sudo", "time", "env", "nohup") else []
        if words:
            return words[0].rsplit("/", 1)[-1][:64] or None
    return None
