"""Offline analysis, used by the CLI (``scan``, ``replay``, ``eval``) and never by the guard.

- ``transcripts``: readers for recorded agent sessions (Claude Code, Codex, Gemini,
  OpenHands, SWE-agent, chat messages, loopfuse's normalized lines) into ``ToolCall`` rows;
- ``scanstats``: per-run statistics for ``loopfuse scan``; ``scanreport``: its HTML report;
- ``replay``: recorded calls through a guard, with what each denial would have saved;
- ``evaluation``: scoring the guard and baselines against labelled corpora (``loopfuse eval``).

Importing this package imports none of them.
"""

from __future__ import annotations

__all__: list[str] = []
