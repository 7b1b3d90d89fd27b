"""LangChain v1 create_agent with a scripted chat model, with or without LoopfuseMiddleware."""

from __future__ import annotations

from typing import Any

from langchain.agents import create_agent
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool

from loopfuse import Guard
from loopfuse.adapters.langchain import LoopfuseMiddleware

HOST = "langchain"


class _Scripted(BaseChatModel):
    calls: int
    turn: int = 0

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools: Any, **kwargs: Any) -> _Scripted:
        return self

    def _generate(self, messages: Any, stop: Any = None, run_manager: Any = None, **kw: Any) -> ChatResult:
        n, self.turn = self.turn, self.turn + 1
        if n >= self.calls:
            message = AIMessage(content="done")
        else:
            message = AIMessage(
                content="", tool_calls=[{"name": "search", "args": {"q": str(n)}, "id": f"c{n}"}]
            )
        return ChatResult(generations=[ChatGeneration(message=message)])


@tool
def search(q: str) -> str:
    """Search."""
    return f"result for {q}"


def run(guarded: bool, calls: int) -> None:
    middleware = [LoopfuseMiddleware(Guard.from_config({"circuit_breaker": {"max_calls_per_agent": 0}}))]
    agent = create_agent(_Scripted(calls=calls), [search], middleware=middleware if guarded else [])
    # InputAgentState types messages as list[AnyMessage | dict]; add_messages also takes ("role", "text") tuples
    agent.invoke({"messages": [("user", "go")]}, {"recursion_limit": 4 * calls + 10})  # type: ignore[call-overload]
