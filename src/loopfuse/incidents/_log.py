"""The incident log: one JSON line for the first denial per agent per kind."""

from __future__ import annotations

import errno
import json
import logging
import os
import stat
from datetime import UTC, datetime
from typing import Any

__all__ = ["IncidentLog", "incident_record"]

logger = logging.getLogger("loopfuse")
logger.addHandler(logging.NullHandler())


def incident_record(
    *, kind: str, tool: str, count: int, limit: int, agent: str | dict[str, list[str]]
) -> dict[str, Any]:
    """The line's fields; ``agent`` is a string id, or ``{"agent_keys": [...]}``."""
    record: dict[str, Any] = {
        "time": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "kind": kind,
        "tool": tool,
        "count": count,
        "limit": limit,
    }
    if isinstance(agent, str):
        record["agent"] = agent
    else:
        record.update(agent)
    return record


class IncidentLog:
    """Appends lines to ``path`` with one ``write`` each, created owner-only (0600).

    A path that cannot be written never affects a decision: the failure is logged
    once and counted by the caller.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = os.fspath(path)
        self._warned = False

    def append(self, record: dict[str, Any]) -> bool:
        """Write one line; False when the file could not be written (never blocks, never raises)."""
        try:
            _append(self.path, _utf8_line(record))
        except Exception as exc:  # OSError, a NUL byte in the path, an unencodable value...
            if not self._warned:
                self._warned = True
                logger.warning("loopfuse: cannot write incident log %s: %s", self.path, exc)
            return False
        return True


def _append(path: str, line: bytes) -> None:
    """One ``write`` to a regular file, on a line of its own: after a line a full disk cut
    short, a newline first. ``O_NONBLOCK``: a FIFO is opened without waiting, then refused,
    so the guard never waits on the log."""
    fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK | os.O_CLOEXEC, 0o600)
    try:
        found = os.fstat(fd)
        if not stat.S_ISREG(found.st_mode):
            raise OSError(errno.EINVAL, "not a regular file")
        size = found.st_size
        if size and os.pread(fd, 1, size - 1) != b"\n":  # a line cut short (a full disk) ends here
            line = b"\n" + line
        if os.write(fd, line) < len(line):
            raise OSError(errno.ENOSPC, "the line was cut short")
    finally:
        os.close(fd)


def _utf8_line(record: dict[str, Any]) -> bytes:
    """One JSON line in UTF-8; a text holding a lone surrogate (a name made of undecodable
    bytes) is written as ``\\udcxx`` escapes, which JSON readers turn back into the same text."""
    try:
        return (json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8")
    except UnicodeEncodeError:
        return (json.dumps(record) + "\n").encode("ascii")
