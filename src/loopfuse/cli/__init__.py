"""The ``loopfuse`` command. Each subcommand lives in its own module with ``register``."""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import sys
from collections.abc import Sequence

from loopfuse import __version__
from loopfuse.analysis.transcripts.base import MAX_DOCUMENT_ENV, max_document_problem

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
    problem = max_document_problem(os.environ.get(MAX_DOCUMENT_ENV))
    if problem is not None:  # read when the readers were imported: said here, as a usage error
        return _failed(problem)
    if sys.stdout is None:  # started with its standard output closed
        return _failed("cannot write the output: standard output is closed")
    try:
        status: int = args.run(args)
        sys.stdout.flush()
    except BrokenPipeError:  # the reader went away (`| head`): done
        _discard_stdout()
        return 0
    except OSError as exc:  # a full disk, a closed descriptor, a file the command did not catch
        _discard_stdout()
        reason = exc.strerror or str(exc)
        return _failed(f"{reason}: {exc.filename}" if exc.filename else f"cannot write the output: {reason}")
    return status


def _discard_stdout() -> None:
    """Point standard output at the null device, so that the interpreter's last flush of
    what could not be written raises nothing more."""
    with contextlib.suppress(OSError, ValueError):
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def _failed(message: str) -> int:
    if sys.stderr is not None:
        print(f"loopfuse: {message}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
