"""LangChain v1 / LangGraph integration: ``from loopfuse.adapters.langchain import ...``.

``LoopfuseMiddleware`` guards every tool call; ``GuardedSummarizationMiddleware`` stops the
rapid-refill summarization loop. Needs ``pip install 'loopfuse[langchain]'``.
"""

from __future__ import annotations

try:
    import langchain.agents.middleware  # noqa: F401
    import langgraph  # noqa: F401
except ImportError as exc:  # pragma: no cover - exercised in a subprocess test
    raise ImportError(
        "loopfuse.adapters.langchain needs LangChain v1 and LangGraph: pip install 'loopfuse[langchain]'"
    ) from exc

from ._langchain_summarization import GuardedSummarizationMiddleware, SummarizationGuardStatus
from ._langchain_tools import LoopfuseMiddleware

__all__ = ["GuardedSummarizationMiddleware", "LoopfuseMiddleware", "SummarizationGuardStatus"]
