"""Old import path, kept working: the same objects as ``loopfuse._config_files``."""

from __future__ import annotations

from ._config_files import (
    load_config_file,
)

__all__ = [
    "load_config_file",
]
