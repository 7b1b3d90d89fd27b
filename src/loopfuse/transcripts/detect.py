"""Old import path, kept working: the same objects as ``loopfuse.analysis.transcripts.detect``."""

from __future__ import annotations

from ..analysis.transcripts.detect import (
    DEFAULT_FOLDERS,
    EMPTY,
    NOT_JSON,
    OTHER_JSON,
    READERS,
    Reader,
    Source,
    default_folders,
    identify,
    read_path,
    read_paths,
    read_source,
    sniff,
    sources,
)

__all__ = [
    "DEFAULT_FOLDERS",
    "EMPTY",
    "NOT_JSON",
    "OTHER_JSON",
    "READERS",
    "Reader",
    "Source",
    "default_folders",
    "identify",
    "read_path",
    "read_paths",
    "read_source",
    "sniff",
    "sources",
]
