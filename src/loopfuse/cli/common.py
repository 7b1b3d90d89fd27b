"""Helpers shared by the subcommands."""

from __future__ import annotations

import sys

from ..analysis.replay import shadow_config
from ..config import GuardConfig, find_config_file, parse_config, parse_config_file
from ..guard import Guard

__all__ = ["found_config", "shadow_guard", "usage_error"]


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
