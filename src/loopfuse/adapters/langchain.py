"""LangChain v1 / LangGraph adapters. Needs ``pip install 'loopfuse[langchain]'``."""

from __future__ import annotations

try:
    import langchain.agents  # noqa: F401
    import langgraph  # noqa: F401
except ImportError as exc:  # pragma: no cover - exercised in a subprocess test
    raise ImportError(
        "loopfuse.adapters.langchain needs LangChain v1 and LangGraph: pip install 'loopfuse[langchain]'"
    ) from exc

from ._langchain_tools import LoopfuseMiddleware

__all__ = ["LoopfuseMiddleware"]
