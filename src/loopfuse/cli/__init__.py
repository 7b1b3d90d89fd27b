"""The ``loopfuse`` command. Each subcommand lives in its own module with ``register``."""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

from loopfuse import __version__

__all__ = ["main"]

SUBCOMMANDS = ("replay", "scan", "eval", "proxy", "incidents")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="loopfuse", description="Stop AI agents from looping: guard, scan and replay tool calls."
    )
    parser.add_argument("--version", action="version", version=f"loopfuse {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in SUBCOMMANDS:
        try:
            module = importlib.import_module(f"loopfuse.cli.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"loopfuse.cli.{name}":
                raise
            continue
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command; the exit status is 0 when done, 1 for findings asked to fail, 2 for usage."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "run", None):
        parser.print_help(sys.stderr)
        return 2
    try:
        status: int = args.run(args)
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    return status


if __name__ == "__main__":
    sys.exit(main())
