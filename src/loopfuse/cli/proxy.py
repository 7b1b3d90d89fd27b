"""``loopfuse proxy [options] -- COMMAND [ARG...]``: an MCP server behind a guard."""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import importlib
import logging
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from .._vocabulary import to_storage
from ..checks import log_path_problem, log_write_problem
from ..config import GuardConfig, find_config_file, in_file, load_config_file, normalize_name, parse_config
from ..errors import ConfigError
from ..guard import Guard
from .common import usage_error

__all__ = ["register", "run"]

EPILOG = """\
examples:
  loopfuse proxy -- npx -y @modelcontextprotocol/server-filesystem ~/src
  loopfuse proxy --config loopfuse.toml --env API_KEY=... -- python server.py
  loopfuse proxy --url http://127.0.0.1:8000/mcp
  loopfuse proxy --listen 8765 -- python server.py
  loopfuse proxy --max-calls 500 -- python server.py

A client session is one agent. Its lifetime cap of calls (max_calls_per_agent) is off
unless --max-calls or the configuration file sets it: a session spans many tasks, and
the loop breakers still catch a loop however long the session.
"""


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "proxy",
        help="guard every tool call of an MCP server (stdio or streamable HTTP)",
        description="Serve an MCP server's tools, resources and prompts with a guard on every tool call.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--config", help="guard configuration (TOML, JSON or YAML); default: discovered")
    parser.add_argument("--incident-log", metavar="PATH", help="incident log (overrides the configuration)")
    parser.add_argument(
        "--max-calls",
        type=int,
        metavar="N",
        help="refuse every call of a session after N calls (0: no cap); default: max_calls_per_agent "
        "when the configuration file sets it, else no cap",
    )
    parser.add_argument(
        "--env", action="append", default=[], metavar="KEY=VALUE", help="extra environment for the server"
    )
    parser.add_argument("--url", help="front a streamable-HTTP MCP server instead of a command")
    parser.add_argument(
        "--listen",
        metavar="[HOST:]PORT",
        help="serve streamable HTTP (default host 127.0.0.1) instead of stdio",
    )
    parser.add_argument("command", nargs=argparse.REMAINDER, metavar="-- COMMAND [ARG...]")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if bool(command) == bool(args.url):
        return usage_error("proxy: give either -- COMMAND [ARG...] or --url URL")
    try:
        env = _parse_env(args.env)
        listen = _parse_listen(args.listen) if args.listen else None
        url = _parse_url(args.url) if args.url else None
        guard = _guard(args.config, args.incident_log, args.max_calls)
    except (ConfigError, ValueError) as exc:
        return usage_error(f"proxy: {exc}")
    if args.url or listen:
        try:
            importlib.import_module("loopfuse.adapters.mcp_proxy.http")
        except ImportError as exc:
            return usage_error(str(exc))
    from ..adapters.mcp_proxy import ProxyOptions, run_proxy

    _log_to_stderr()
    return run_proxy(ProxyOptions(command=command, url=url, env=env, listen=listen), guard)


def _log_to_stderr() -> None:
    """Denials and proxy warnings on stderr, where MCP clients keep a server's log."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(message)s"))
    logger = logging.getLogger("loopfuse")
    logger.addHandler(handler)
    logger.setLevel(logging.WARNING)


def _guard(config_path: str | None, incident_log: str | None, max_calls: int | None) -> Guard:
    found = find_config_file(config_path)
    mapping = load_config_file(found) if found is not None else {}
    config = _parse(mapping, found)
    if max_calls is not None and max_calls < 0:
        raise ValueError(f"--max-calls {max_calls}: expected 0 (no cap) or a positive number of calls")
    problem = (
        None if incident_log is None else log_path_problem(incident_log) or log_write_problem(incident_log)
    )
    if problem is not None:
        raise ValueError(f"--incident-log {incident_log!r} is not allowed: expected {problem}")
    cb = config.circuit_breaker
    cap = max_calls if max_calls is not None else cb.max_calls_per_agent if _sets_cap(mapping) else 0
    cb = dataclasses.replace(cb, max_calls_per_agent=cap, incident_log=incident_log or cb.incident_log)
    with in_file(found) if found is not None else contextlib.nullcontext():  # the store's URL, the log
        return Guard(dataclasses.replace(config, circuit_breaker=cb))


def _parse(mapping: Mapping[str, Any], found: Path | None) -> GuardConfig:
    if found is None:
        return parse_config(mapping)
    with in_file(found):
        return parse_config(mapping)


def _sets_cap(mapping: Mapping[str, Any]) -> bool:
    """Whether the configuration file sets the cap (``[cap] limit`` or its older spelling
    ``[circuit_breaker] max_calls_per_agent``); the file has already parsed."""
    stored, _ = to_storage({normalize_name(str(k)): v for k, v in mapping.items()})
    body = stored.get("circuit_breaker")
    return isinstance(body, Mapping) and any(
        normalize_name(str(key)) == "max_calls_per_agent" for key in body
    )


def _parse_env(pairs: list[str]) -> dict[str, str]:
    env: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise ValueError("--env: expected KEY=VALUE, got an entry without a name or '='")
        env[key] = value
    return env


def _parse_listen(text: str) -> tuple[str, int]:
    host, _, port = text.rpartition(":")
    if not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"--listen {text!r}: expected [HOST:]PORT with a port from 1 to 65535")
    return (host.strip("[]") or "127.0.0.1", int(port))


def _parse_url(url: str) -> str:
    """``url`` (its scheme in lower case) if it is an http:// or https:// URL with a host and
    a valid port; else ValueError."""
    try:
        parts = urlsplit(url)
        scheme = parts.scheme
        valid = scheme in ("http", "https") and url[: len(scheme)].lower() == scheme and bool(parts.hostname)
        parts.port  # noqa: B018 - raises ValueError for a port out of range
    except ValueError:
        valid = False
    if not valid:
        raise ValueError(
            f"--url {url!r}: expected an http:// or https:// URL, such as http://127.0.0.1:8000/mcp"
        )
    return scheme + url[len(scheme) :]
