"""Per-thread state is bounded: the least recently used thread is forgotten past max_threads."""

from __future__ import annotations

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel

from loopfuse import ConfigError
from loopfuse.adapters.langchain import GuardedSummarizationMiddleware


def middleware(max_threads: int) -> GuardedSummarizationMiddleware:
    model = GenericFakeChatModel(messages=iter([]))
    return GuardedSummarizationMiddleware(model, trigger=("tokens", 1000), max_threads=max_threads)


def test_threads_past_the_bound_are_forgotten_least_recent_first() -> None:
    guard = middleware(max_threads=2)
    for thread_id in ("a", "b"):
        guard._thread(thread_id).tracker.trip("test")
    guard._thread("a")  # "a" is now the most recent
    guard._thread("c")
    assert guard.status("a").tripped and guard.status("c").tripped is False
    assert guard.status("b").tripped is False  # forgotten: a fresh tracker


def test_max_threads_is_validated() -> None:
    with pytest.raises(ConfigError, match="max_threads"):
        middleware(max_threads=0)
