"""``GuardedSummarizationMiddleware``: LangChain's ``SummarizationMiddleware`` with the compaction breaker.

It decides exactly as the parent does whether and what to summarize, then asks a
per-thread ``RapidRefillTracker`` (and, with ``predict_futile``, whether the kept tail alone
is over the trigger) before spending the summarization call. A refused compaction leaves
the conversation as it is, logs one warning naming the culprit, and, with
``announce_in_prompt``, adds one notice to the system message of each model call.

It relies on these parent internals, present in langchain 1.3 to 1.5: ``token_counter``,
``_partial_token_counter``, ``_ensure_message_ids``, ``_should_summarize``,
``_determine_cutoff_index``, ``_partition_messages``, ``_create_summary``,
``_acreate_summary``, ``_build_new_messages``, ``_get_profile_limits``, ``_trigger_clauses``
(``_trigger_conditions`` before 1.4), and the summary message's
``additional_kwargs["lc_source"] == "summarization"``.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain.agents.middleware import SummarizationMiddleware
from langchain.agents.middleware.types import ModelRequest
from langchain_core.messages import (
    AIMessage,
    AnyMessage,
    HumanMessage,
    RemoveMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.messages.utils import count_tokens_approximately
from langgraph.graph.message import REMOVE_ALL_MESSAGES

from ..checks import check_bool, check_int
from ..compaction import (
    CompactionGate,
    CompactionReport,
    CompactionStatus,
    KeptMessage,
    RapidRefillTracker,
    build_report,
)

__all__ = ["GuardedSummarizationMiddleware", "SummarizationGuardStatus"]

logger = logging.getLogger("loopfuse.compaction")

_SECTION = "compaction"
_CULPRIT_ARGUMENTS = ("path", "file_path", "filepath", "filename", "file", "command", "cmd")
_NOTICE_ADVICE = (
    "Tell the user that automatic context compaction has stopped and why. Do not re-read the "
    "oversized output; if you need more of it, read it in small parts."
)


@dataclass(frozen=True, slots=True)
class SummarizationGuardStatus:
    """The breaker's state for one LangGraph thread (``thread_id`` ``None``: runs without one)."""

    thread_id: str | None
    tripped: bool
    compaction: CompactionStatus
    report: CompactionReport | None


@dataclass
class _Thread:
    tracker: RapidRefillTracker
    seen_tool_turns: set[str] = field(default_factory=set)
    report: CompactionReport | None = None
    fixed_prompt_tokens: int | None = None


@dataclass(frozen=True, slots=True)
class _Plan:
    thread: _Thread
    gate: CompactionGate | None
    to_summarize: list[AnyMessage]
    kept: list[AnyMessage]


class GuardedSummarizationMiddleware(SummarizationMiddleware[Any, Any]):
    """``SummarizationMiddleware`` that refuses the rapid-refill summarization loop.

    Takes every parameter of ``SummarizationMiddleware`` unchanged, plus:
    ``tool_turn_threshold`` and ``max_consecutive_rapid_refills`` (see ``RapidRefillTracker``),
    ``announce_in_prompt`` (tell the model while tripped) and ``predict_futile`` (refuse the
    first compaction whose kept tail alone is already over the trigger).
    """

    def __init__(
        self,
        model: Any,
        *,
        tool_turn_threshold: int = 2,
        max_consecutive_rapid_refills: int = 3,
        announce_in_prompt: bool = True,
        predict_futile: bool = True,
        max_threads: int = 10_000,
        **summarization_kwargs: Any,
    ) -> None:
        RapidRefillTracker(tool_turn_threshold, max_consecutive_rapid_refills)
        self.tool_turn_threshold = tool_turn_threshold
        self.max_consecutive_rapid_refills = max_consecutive_rapid_refills
        self.announce_in_prompt = check_bool(_SECTION, "announce_in_prompt", announce_in_prompt)
        self.predict_futile = check_bool(_SECTION, "predict_futile", predict_futile)
        self.max_threads = check_int(_SECTION, "max_threads", max_threads, 1)
        super().__init__(model, **summarization_kwargs)
        self._threads: OrderedDict[str | None, _Thread] = OrderedDict()
        self._threads_lock = threading.Lock()

    # -- public --------------------------------------------------------------------------

    def status(self, thread_id: Any = None) -> SummarizationGuardStatus:
        """Counters, latch, reason and culprit report of one thread (its id as the graph's
        config gave it: a string, a number, a UUID)."""
        with self._threads_lock:
            thread = self._threads.get(_as_key(thread_id))
        if thread is None:
            thread = self._new_thread()
        tracker = thread.tracker
        return SummarizationGuardStatus(_as_key(thread_id), tracker.latched, tracker.status(), thread.report)

    def reset(self, thread_id: Any = None) -> None:
        """Re-arm one thread's breaker (its tool-turn clock keeps running)."""
        with self._threads_lock:
            thread = self._threads.get(_as_key(thread_id))
        if thread is not None:
            thread.tracker.reset()
            thread.report = None

    # -- LangChain hooks -------------------------------------------------------------------

    def before_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        plan = self._plan(state["messages"], runtime)
        if plan is None:
            return None
        return self._compacted(plan, self._create_summary(plan.to_summarize))

    async def abefore_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        plan = self._plan(state["messages"], runtime)
        if plan is None:
            return None
        return self._compacted(plan, await self._acreate_summary(plan.to_summarize))

    def wrap_model_call(self, request: ModelRequest[Any], handler: Callable[[ModelRequest[Any]], Any]) -> Any:
        return handler(self._with_notice(request))

    async def awrap_model_call(self, request: ModelRequest[Any], handler: Callable[..., Any]) -> Any:
        return await handler(self._with_notice(request))

    # -- deciding --------------------------------------------------------------------------

    def _plan(self, messages: list[AnyMessage], runtime: Any) -> _Plan | None:
        self._ensure_message_ids(messages)
        thread_id = _thread_id(runtime)
        thread = self._thread(thread_id)
        self._guarded(_observe_tool_turns, thread, messages)
        if not self._should_summarize(messages, self.token_counter(messages)):
            return None
        cutoff = self._determine_cutoff_index(messages)
        if cutoff <= 0:
            return None
        to_summarize, kept = self._partition_messages(messages, cutoff)
        gate = self._guarded(self._judge, thread, thread_id, messages, kept)
        if gate is not None and gate.blocked:
            return None
        return _Plan(thread, gate, to_summarize, kept)

    def _judge(
        self, thread: _Thread, thread_id: str | None, messages: list[AnyMessage], kept: list[AnyMessage]
    ) -> CompactionGate:
        tracker = thread.tracker
        was_latched = tracker.latched
        gate = tracker.gate()
        if not gate.blocked and self.predict_futile and self._tail_alone_triggers(kept):
            gate = tracker.trip(self._futile_reason())
        if gate.blocked:
            thread.report = self._report(thread, tracker.status().latch_reason or gate.reason, messages, kept)
            if not was_latched:
                _log_trip(thread_id, gate, tracker.status(), thread.report)
        return gate

    def _compacted(self, plan: _Plan, summary: str) -> dict[str, Any]:
        if plan.gate is not None:
            self._guarded(_commit, plan.thread, plan.gate)
        return {
            "messages": [
                RemoveMessage(id=REMOVE_ALL_MESSAGES),
                *self._build_new_messages(summary),
                *plan.kept,
            ]
        }

    def _guarded(self, step: Callable[..., Any], *args: Any) -> Any:
        """Run one of the breaker's own steps; if it fails, the host carries on as without it."""
        try:
            return step(*args)
        except Exception:
            logger.exception("loopfuse compaction breaker could not judge this step; compacting as usual")
            return None

    # -- the trigger, measured on the kept tail --------------------------------------------

    def _tail_alone_triggers(self, kept: list[AnyMessage]) -> bool:
        tokens = self._count(kept)
        messages_after = len(kept) + 1  # the summary message joins the kept tail
        return any(
            all(self._met(kind, value, messages_after, tokens) for kind, value in clause.items())
            for clause in self._clauses()
        )

    def _met(self, kind: str, value: float, messages: int, tokens: int) -> bool:
        if kind == "messages":
            return messages >= value
        threshold = self._token_threshold(kind, value)
        return threshold is not None and tokens >= threshold

    def _token_threshold(self, kind: str, value: float) -> int | None:
        if kind == "tokens":
            return int(value)
        if kind != "fraction":
            return None
        limit = self._get_profile_limits()
        return None if limit is None else max(1, int(limit * value))

    def _trigger_tokens(self) -> int | None:
        """The smallest token count at which one trigger clause can fire on tokens."""
        found = []
        for clause in self._clauses():
            limits = [self._token_threshold(kind, value) for kind, value in clause.items()]
            known = [limit for limit in limits if limit is not None]
            if known:
                found.append(max(known))
        return min(found) if found else None

    def _clauses(self) -> list[Mapping[str, float]]:
        clauses = getattr(self, "_trigger_clauses", None)
        if clauses is None:  # langchain < 1.4 keeps (kind, value) tuples
            clauses = [{kind: value} for kind, value in getattr(self, "_trigger_conditions", [])]
        return list(clauses)

    def _count(self, messages: Sequence[AnyMessage]) -> int:
        counter = getattr(self, "_partial_token_counter", self.token_counter)
        return int(counter(messages))

    # -- the culprit report and the notice -------------------------------------------------

    @staticmethod
    def _futile_reason() -> str:
        return (
            "the tail a compaction would keep is over the trigger by itself, "
            "so summarizing cannot bring the context under it"
        )

    def _report(
        self, thread: _Thread, reason: str, messages: list[AnyMessage], kept: list[AnyMessage]
    ) -> CompactionReport:
        calls = {
            call["id"]: call for msg in messages if isinstance(msg, AIMessage) for call in msg.tool_calls
        }
        described = [self._kept_message(msg, calls) for msg in kept]
        return build_report(reason, described, self._trigger_tokens(), thread.fixed_prompt_tokens)

    def _kept_message(self, message: AnyMessage, calls: Mapping[str | None, Any]) -> KeptMessage:
        tokens = self._count([message])
        if not isinstance(message, ToolMessage):
            return KeptMessage(_role(message), tokens)
        call = calls.get(message.tool_call_id) or {}
        tool = message.name or call.get("name") or "tool"
        return KeptMessage("tool", tokens, tool, _culprit_argument(call.get("args")))

    def _with_notice(self, request: ModelRequest[Any]) -> ModelRequest[Any]:
        try:
            thread = self._thread(_thread_id(request.runtime))
            thread.fixed_prompt_tokens = _fixed_prompt_tokens(request)
            if not (self.announce_in_prompt and thread.tracker.latched):
                return request
            notice = f"[loopfuse] {self._describe(thread)} {_NOTICE_ADVICE}"
            return request.override(system_message=_append(request.system_message, notice))
        except Exception:
            logger.exception("loopfuse compaction breaker could not add its notice")
            return request

    @staticmethod
    def _describe(thread: _Thread) -> str:
        if thread.report is not None:
            return thread.report.describe()
        return f"Automatic compaction stopped: {thread.tracker.status().latch_reason}."

    # -- threads ---------------------------------------------------------------------------

    def _thread(self, thread_id: str | None) -> _Thread:
        with self._threads_lock:
            thread = self._threads.get(thread_id)
            if thread is None:
                thread = self._threads[thread_id] = self._new_thread()
                if len(self._threads) > self.max_threads:
                    self._threads.popitem(last=False)
            else:
                self._threads.move_to_end(thread_id)
            return thread

    def _new_thread(self) -> _Thread:
        return _Thread(RapidRefillTracker(self.tool_turn_threshold, self.max_consecutive_rapid_refills))


def _thread_id(runtime: Any) -> str | None:
    info = getattr(runtime, "execution_info", None)
    thread_id = getattr(info, "thread_id", None)
    if thread_id is None:
        try:
            from langgraph.config import get_config

            thread_id = get_config().get("configurable", {}).get("thread_id")
        except Exception:
            return None
    return _as_key(thread_id)


def _as_key(thread_id: Any) -> str | None:
    """How a thread id is kept: its text (a graph's config may give a number or a UUID)."""
    return None if thread_id is None else str(thread_id)


def _observe_tool_turns(thread: _Thread, messages: list[AnyMessage]) -> None:
    """Count assistant messages with tool calls since the last summary, each only once.

    The tail kept by an earlier compaction holds tool turns already counted before it; their
    ids are remembered, so only new assistant messages move the tool-turn clock.
    """
    start = _after_last_summary(messages)
    turns = {m.id for m in messages[start:] if isinstance(m, AIMessage) and m.tool_calls and m.id}
    for _ in turns - thread.seen_tool_turns:
        thread.tracker.note_tool_turn()
    thread.seen_tool_turns = turns


def _after_last_summary(messages: list[AnyMessage]) -> int:
    for index in range(len(messages) - 1, -1, -1):
        if _is_summary(messages[index]):
            return index + 1
    return 0


def _is_summary(message: AnyMessage) -> bool:
    return isinstance(message, HumanMessage) and message.additional_kwargs.get("lc_source") == "summarization"


def _commit(thread: _Thread, gate: CompactionGate) -> None:
    thread.tracker.commit_compaction(gate)
    thread.report = None


def _role(message: AnyMessage) -> str:
    if _is_summary(message):
        return "summary"
    if isinstance(message, AIMessage):
        return "assistant"
    if isinstance(message, SystemMessage):
        return "system"
    return "user" if isinstance(message, HumanMessage) else message.type


def _culprit_argument(args: Any) -> str | None:
    """The call's path or command argument, the one value that names a culprit for the user."""
    if not isinstance(args, Mapping):
        return None
    for key in _CULPRIT_ARGUMENTS:
        value = args.get(key)
        if isinstance(value, str) and value:
            return f"{key}: {value}"
    return None


def _fixed_prompt_tokens(request: ModelRequest[Any]) -> int:
    fixed = [m for m in [request.system_message, *request.messages] if isinstance(m, SystemMessage)]
    try:
        return int(count_tokens_approximately(fixed, tools=list(request.tools)))
    except TypeError:  # langchain-core without the ``tools`` parameter
        return int(count_tokens_approximately(fixed))


def _append(system: SystemMessage | None, notice: str) -> SystemMessage:
    if system is None:
        return SystemMessage(content=notice)
    content = system.content
    if isinstance(content, str):
        return system.model_copy(update={"content": f"{content}\n\n{notice}" if content else notice})
    return system.model_copy(update={"content": [*content, {"type": "text", "text": notice}]})


def _log_trip(
    thread_id: str | None, gate: CompactionGate, status: CompactionStatus, report: CompactionReport
) -> None:
    logger.warning(
        "loopfuse: thread %r: %d consecutive rapid refills (limit %d), tool-turn threshold %d, "
        "last gap %s. %s",
        thread_id,
        gate.projected_consecutive_rapid_refills,
        status.max_consecutive_rapid_refills,
        status.tool_turn_threshold,
        "none (no compaction yet)" if gate.gap is None else f"{gate.gap} tool turns",
        report.describe(),
    )
