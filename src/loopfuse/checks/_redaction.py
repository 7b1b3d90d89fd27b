"""Secrets out of what is shown: a URL's password never reaches a log line or an error."""

from __future__ import annotations

__all__ = ["redacted"]


def redacted(url: str) -> str:
    """``url`` without its password, for logs and errors."""
    scheme, sep, rest = url.partition("://")
    if "@" in rest:
        rest = "***@" + rest.rsplit("@", 1)[1]
    return scheme + sep + rest
