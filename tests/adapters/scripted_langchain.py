"""A scripted LangChain chat model: no network, answers from a Python function."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Any

from langchain.agents.middleware.types import AgentState, InputAgentState, OutputAgentState
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langgraph.graph import MessagesState
from langgraph.graph.state import CompiledStateGraph
from pydantic import Field

Script = Callable[[int, list[BaseMessage]], AIMessage]
Agent = CompiledStateGraph[AgentState[Any], None, InputAgentState, OutputAgentState[Any]]
"""What ``create_agent`` builds when given no context schema."""
ToolGraph = CompiledStateGraph[MessagesState, None, MessagesState, MessagesState]


class ScriptedChatModel(BaseChatModel):
    """Answers turn ``n`` (from 0) with ``script(n, messages)``; records the tool results it saw."""

    script: Script
    turns: int = 0
    seen: list[ToolMessage] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedChatModel:
        return self

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> ChatResult:
        self.seen.extend(_new_tool_results(messages))
        message = self.script(self.turns, messages)
        self.turns += 1
        return ChatResult(generations=[ChatGeneration(message=message)])


def _new_tool_results(messages: list[BaseMessage]) -> list[ToolMessage]:
    trailing = list(itertools.takewhile(lambda m: isinstance(m, ToolMessage), reversed(messages)))
    return list(reversed(trailing))  # type: ignore[arg-type]


_ids = itertools.count()


def calls(*specs: tuple[str, dict[str, Any]]) -> AIMessage:
    """A model turn asking for the given tool calls, in this order."""
    tool_calls = [{"name": n, "args": a, "id": f"call_{next(_ids)}"} for n, a in specs]
    return AIMessage(content="", tool_calls=tool_calls)


def forever(name: str, args: dict[str, Any]) -> Script:
    """A model that asks for the same call on every turn."""
    return lambda n, messages: calls((name, args))


def scripted(turns: list[AIMessage]) -> Script:
    """A model that plays ``turns`` then answers "done"."""
    return lambda n, messages: turns[n] if n < len(turns) else AIMessage(content="done")
