"""Helpers shared by the subcommands."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from ..analysis.replay import shadow_config
from ..analysis.transcripts.base import ReadTally
from ..analysis.transcripts.detect import NOT_A_FORMAT, identify
from ..config import GuardConfig, find_config_file, parse_config, parse_config_file
from ..guard import Guard

__all__ = ["found_config", "named_but_unread", "shadow_guard", "unusable_file", "usage_error"]


def shown(text: str) -> str:
    """``text`` with each lone surrogate (from undecodable bytes, or a name cut mid-emoji) as
    U+FFFD: no output can encode one."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


def usage_error(message: str) -> int:
    print(f"loopfuse: {message}", file=sys.stderr)
    return 2


def shadow_guard(config_path: str | None) -> Guard:
    """The guard a replay uses: the configuration found (or the defaults), without its
    incident log, its state in this process."""
    return Guard(shadow_config(found_config(config_path)))


def found_config(config_path: str | None) -> GuardConfig:
    """The configuration ``config_path`` names, else the one discovered, else the defaults."""
    found = find_config_file(config_path)
    return parse_config_file(found) if found is not None else parse_config({})


def unusable_file(paths: list[Path]) -> str | None:
    """Why a file named on the command line cannot be read as a session, or None (folders are walked:
    what they hold that cannot be read is listed as skipped, not an error)."""
    for path in paths:
        if path.is_dir():
            continue
        try:
            fmt, why_not = identify(path)
        except OSError as exc:
            return f"cannot read {path}: {exc.strerror or exc}"
        if fmt is None:
            return _not_a_session(path, why_not)
    return None


def _not_a_session(path: Path, why_not: str) -> str:
    """``why_not`` said once: "(not JSON)", not "(not a session format ... (not JSON))"."""
    prefix = f"{NOT_A_FORMAT} ("
    detail = why_not[len(prefix) : -1] if why_not.startswith(prefix) else why_not
    return f"{path} is not a recorded agent session in a format loopfuse reads ({detail})"


def named_but_unread(paths: list[Path], tally: ReadTally) -> str | None:
    """A file named on the command line that looked like a session but could not be read."""
    named = {os.path.abspath(p) for p in paths if not p.is_dir()}
    for skipped in tally.skipped_files:
        if os.path.abspath(skipped.path) in named:
            return f"cannot read {skipped.path}: {skipped.reason}"
    return None
