"""Helpers shared by the subcommands."""

from __future__ import annotations

import dataclasses
import sys

from ..config import find_config_file, parse_config, parse_config_file
from ..guard import Guard

__all__ = ["shadow_guard", "usage_error"]


def usage_error(message: str) -> int:
    print(f"loopfuse: {message}", file=sys.stderr)
    return 2


def shadow_guard(config_path: str | None) -> Guard:
    """The guard a replay uses: the configuration found, without its incident log."""
    found = find_config_file(config_path)
    config = parse_config_file(found) if found is not None else parse_config({})
    cb = dataclasses.replace(config.circuit_breaker, incident_log=None)
    return Guard(dataclasses.replace(config, circuit_breaker=cb))
