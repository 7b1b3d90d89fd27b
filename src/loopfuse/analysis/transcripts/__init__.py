"""Readers for recorded agent sessions, each yielding ``ToolCall`` rows (``model``).

``detect`` finds the sessions under a folder and picks the reader for each file; ``base`` and
``tally`` hold what the readers share (document loading, the call queue, the count of what was
read and skipped). One module per format: ``claude_code``, ``codex``, ``gemini``,
``openhands``, ``swe_agent``, ``messages`` (chat-message lists) and ``normalized``
(loopfuse's own JSON lines).
"""

from __future__ import annotations

__all__: list[str] = []
