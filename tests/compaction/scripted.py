"""Scripted LangChain pieces for the compaction scenario, shared by the tests and bench/compaction.py.

No network: the agent model follows a script, the summarizer counts what it is sent.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain.agents import create_agent
from langchain.agents.middleware import SummarizationMiddleware
from langchain.agents.middleware.types import AgentState, InputAgentState, OutputAgentState
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.messages.utils import count_tokens_approximately
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph.state import CompiledStateGraph
from pydantic import Field

FINAL_ANSWER = "All files read."
SECRET_ARGUMENT = "SECRET-PATTERN-42"  # an argument value no report may show
Agent = CompiledStateGraph[AgentState[Any], None, InputAgentState, OutputAgentState[Any]]


class ScriptedAgentModel(BaseChatModel):
    """Calls ``read_file`` on a new path ``tool_turns`` times, then answers; records every prompt."""

    tool_turns: int
    prompts: list[list[BaseMessage]] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "scripted-agent"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedAgentModel:
        return self

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> ChatResult:
        self.prompts.append(list(messages))
        step = len(self.prompts)
        if step > self.tool_turns:
            return _result(AIMessage(content=FINAL_ANSWER))
        call = {
            "name": "read_file",
            "args": {"path": f"logs/part{step}.log", "pattern": SECRET_ARGUMENT},
            "id": f"call-{step}",
        }
        return _result(AIMessage(content="", tool_calls=[call]))


class CountingSummarizer(BaseChatModel):
    """A summarization model that counts its calls and the tokens it was sent."""

    calls: int = 0
    tokens_sent: int = 0

    @property
    def _llm_type(self) -> str:
        return "counting-summarizer"

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> ChatResult:
        self.calls += 1
        self.tokens_sent += count_tokens_approximately(messages)
        return _result(AIMessage(content=f"Summary {self.calls}: files were read."))


def _result(message: AIMessage) -> ChatResult:
    return ChatResult(generations=[ChatGeneration(message=message)])


def file_reader(output_chars: int) -> tuple[BaseTool, list[str]]:
    """A ``read_file`` tool returning ``output_chars`` characters on every call, and its call log."""
    ran: list[str] = []

    @tool
    def read_file(path: str, pattern: str = "") -> str:
        """Read a file, keeping the lines that match ``pattern``."""
        ran.append(path)
        return "x" * output_chars

    return read_file, ran


def build_agent(
    model: ScriptedAgentModel,
    reader: BaseTool,
    summarization: SummarizationMiddleware,
    system_prompt: str | None = None,
) -> Agent:
    return create_agent(
        model, [reader], system_prompt=system_prompt, middleware=[summarization], checkpointer=InMemorySaver()
    )


def run(agent: Agent, thread_id: Any = "t1") -> dict[str, Any]:
    config: RunnableConfig = {"configurable": {"thread_id": thread_id}, "recursion_limit": 500}
    return agent.invoke({"messages": [HumanMessage("Read the logs.")]}, config)


async def arun(agent: Agent, thread_id: str = "t1") -> dict[str, Any]:
    config: RunnableConfig = {"configurable": {"thread_id": thread_id}, "recursion_limit": 500}
    return await agent.ainvoke({"messages": [HumanMessage("Read the logs.")]}, config)
