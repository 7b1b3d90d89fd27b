"""The compaction breaker: stop the rapid-refill summarization loop and name its culprit.

Host-neutral and dependency-free. ``RapidRefillTracker`` decides whether an automatic
compaction may run; ``build_report`` explains a refusal. The LangChain middleware built on
them is ``loopfuse.adapters.langchain.GuardedSummarizationMiddleware``.
"""

from __future__ import annotations

from .report import CompactionReport, KeptMessage, build_report
from .tracker import CompactionGate, CompactionStatus, RapidRefillTracker

__all__ = [
    "CompactionGate",
    "CompactionReport",
    "CompactionStatus",
    "KeptMessage",
    "RapidRefillTracker",
    "build_report",
]
