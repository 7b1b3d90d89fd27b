"""LangChain v1 integration: ``from loopfuse.adapters.langchain import ...``.

Needs the ``langchain`` extra: ``pip install 'loopfuse[langchain]'``.
"""

from __future__ import annotations

try:
    import langchain.agents.middleware  # noqa: F401
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "loopfuse.adapters.langchain needs LangChain v1: pip install 'loopfuse[langchain]'"
    ) from exc

from ._langchain_summarization import GuardedSummarizationMiddleware, SummarizationGuardStatus

__all__ = ["GuardedSummarizationMiddleware", "SummarizationGuardStatus"]
