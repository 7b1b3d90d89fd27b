"""Plain functions: Guard.wrap, directly and as a decorator, sync and async; agent sessions."""

from __future__ import annotations

import asyncio
import functools
import threading
from collections.abc import Callable
from typing import Any, cast

import pytest

from loopfuse import Guard, LoopAbortedError
from loopfuse._wrapping import agent_session

LIMITS = {"circuit_breaker": {"duplicate_limit": 3, "result_limit": 3}, "guard": {"abort_after_denials": 4}}
SECRET = "secret-query-7"


def test_wrapped_function_runs_until_the_limit_then_returns_the_denial() -> None:
    runs: list[str] = []

    def search(q: str) -> str:
        runs.append(q)
        return "found"

    guarded = Guard.from_config(LIMITS).wrap(search)
    answers = [guarded(SECRET) for _ in range(5)]
    assert answers[:3] == ["found"] * 3
    assert all(a.startswith("loopfuse refused this search call") for a in answers[3:])
    assert all(SECRET not in a for a in answers[3:])
    assert len(runs) == 3
    assert guarded.__name__ == "search"


def test_positional_and_keyword_spellings_are_the_same_call() -> None:
    guard = Guard.from_config(LIMITS)

    @guard.wrap
    def read(path: str, lines: int = 10) -> str:
        return "text"

    assert [read("a"), read(path="a"), read("a", lines=10)] == ["text"] * 3
    assert read("a", 10).startswith("loopfuse refused this read call")


def test_decorator_with_tool_name_and_agent() -> None:
    guard = Guard.from_config(LIMITS)

    @guard.wrap(tool="web_search", agent="researcher")
    def search(q: str) -> str:
        return "found"

    for _ in range(3):
        search("x")
    assert "web_search" in search("x")
    assert guard.check("web_search", {"q": "x"}, agent="writer").allowed


def test_escalation_raises_loop_aborted_error() -> None:
    guard = Guard.from_config(LIMITS)
    search = guard.wrap(lambda q: "found", tool="search", agent="a1")
    for _ in range(3 + 3):
        search(SECRET)
    with pytest.raises(LoopAbortedError) as caught:
        search(SECRET)
    assert "'a1'" in str(caught.value) and "search" in str(caught.value) and "4 denials" in str(caught.value)
    assert SECRET not in str(caught.value)


def test_an_allowed_call_resets_the_escalation_count() -> None:
    search = Guard.from_config(LIMITS).wrap(lambda q: "found", tool="search")
    for _ in range(3 + 3):
        search("x")
    assert search("other") == "found"
    for _ in range(3):
        assert search("x").startswith("loopfuse refused")


class CountingFetch:
    """An async tool that counts how often it really ran."""

    def __init__(self) -> None:
        self.runs = 0

    async def __call__(self, url: str) -> str:
        self.runs += 1
        await asyncio.sleep(0)
        return "page"


async def test_async_function_is_wrapped_as_async() -> None:
    fetch = CountingFetch()
    guarded = Guard.from_config(LIMITS).wrap(fetch.__call__)
    assert asyncio.iscoroutinefunction(guarded)
    answers = [await guarded("u") for _ in range(7 - 1)]
    assert answers[:3] == ["page"] * 3 and fetch.runs == 3
    with pytest.raises(LoopAbortedError):
        await guarded("u")


async def test_concurrent_async_calls_count_exactly() -> None:
    fetch = CountingFetch()
    config = {"circuit_breaker": {"duplicate_limit": 3}, "guard": {"abort_after_denials": 0}}
    guarded = Guard.from_config(config).wrap(fetch.__call__)
    answers = await asyncio.gather(*(guarded("u") for _ in range(10)))
    assert fetch.runs == 3 and answers.count("page") == 3


def test_threads_calling_one_wrapped_function_count_exactly() -> None:
    runs = 0
    lock = threading.Lock()

    def work(job: str) -> str:
        nonlocal runs
        with lock:
            runs += 1
        return "ok"

    guard = Guard.from_config(
        {"circuit_breaker": {"duplicate_limit": 5}, "guard": {"abort_after_denials": 0}}
    )
    guarded = guard.wrap(work)
    threads = [threading.Thread(target=guarded, args=("same",)) for _ in range(40)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=10)
    assert runs == 5


def _search_guard() -> tuple[Guard, Callable[[str], str]]:
    guard = Guard.from_config(LIMITS)
    return guard, guard.wrap(lambda q: "found", tool="search")


def test_each_agent_session_has_its_own_counts() -> None:
    guard, search = _search_guard()
    runs = []
    for run in ("run-1", "run-2"):
        with agent_session(run):
            runs.append([search("x") == "found" for _ in range(4)])
    assert runs == [[True, True, True, False]] * 2
    assert not guard.check("search", {"q": "x"}, agent="run-1").allowed  # the session names the agent
    assert guard.check("search", {"q": "x"}, agent="default").allowed


def test_without_a_session_the_process_is_the_agent_default() -> None:
    guard, search = _search_guard()
    for _ in range(3):
        search("x")
    assert not guard.check("search", {"q": "x"}, agent="default").allowed


def test_an_explicit_agent_wins_over_the_session() -> None:
    guard = Guard.from_config(LIMITS)
    search = guard.wrap(lambda q: "found", tool="search", agent="researcher")
    with agent_session("run-1"):
        for _ in range(3):
            search("x")
    assert not guard.check("search", {"q": "x"}, agent="researcher").allowed
    assert guard.check("search", {"q": "x"}, agent="run-1").allowed


def test_sessions_nest_and_the_outer_one_comes_back() -> None:
    guard, search = _search_guard()
    with agent_session("outer"):
        search("x")
        with agent_session("inner"):
            search("x")
        search("x")
    assert [guard.check("search", {"q": "x"}, agent=a).allowed for a in ("outer", "inner")] == [True, True]
    assert not guard.check("search", {"q": "x"}, agent="outer").allowed  # the outer session's 4th call


async def test_the_session_reaches_tasks_and_threads_started_inside_it() -> None:
    fetch = CountingFetch()
    guarded = Guard.from_config(LIMITS).wrap(fetch.__call__)
    sync_runs: list[str] = []

    def fetch_sync(url: str) -> str:
        sync_runs.append(url)
        return "page"

    sync = Guard.from_config(LIMITS).wrap(fetch_sync)
    for run in ("run-1", "run-2"):
        with agent_session(run):
            await asyncio.gather(*(guarded("u") for _ in range(5)))
            await asyncio.gather(*(asyncio.to_thread(sync, "u") for _ in range(5)))
    assert fetch.runs == 3 * 2 and len(sync_runs) == 3 * 2


def test_with_the_defaults_the_sixth_identical_call_is_refused_as_by_every_adapter() -> None:
    search = Guard().wrap(lambda query: "no results", tool="search")
    answers = [search("acme") for _ in range(6)]
    assert [answer == "no results" for answer in answers] == [True] * 5 + [False]
    assert "(same_result_limit 5)" in answers[5]


def test_new_results_are_progress_for_a_wrapped_function() -> None:
    pages = iter(range(100))
    next_page = Guard().wrap(lambda: f"page {next(pages)}", tool="next_page")
    assert all(next_page().startswith("page") for _ in range(7))  # window alone would refuse the 7th


def test_what_the_function_raises_is_reported_as_an_error_and_raised() -> None:
    def edit(path: str) -> str:
        raise ValueError("SyntaxError at line 3")

    guarded = Guard.from_config({"same_error": {"identical_limit": 2}}).wrap(edit)
    for _ in range(2):
        with pytest.raises(ValueError):
            guarded("a.py")
    assert guarded("a.py").startswith("loopfuse refused this edit call")


def fetch(url: str) -> str:
    return "page"


class Fetcher:
    def __call__(self, url: str) -> str:
        return "page"

    def get(self, url: str) -> str:
        return "page"


@pytest.mark.parametrize(
    ("fn", "args", "name"),
    [
        (functools.partial(fetch, "https://a"), (), "fetch"),
        (Fetcher(), ("https://a",), "Fetcher"),
        (Fetcher().get, ("https://a",), "get"),
        (functools.partial(functools.partial(Fetcher()), "https://a"), (), "Fetcher"),
    ],
)
def test_a_partial_a_callable_object_and_a_method_are_named_after_what_they_call(
    fn: Callable[..., str], args: tuple[str, ...], name: str
) -> None:
    guarded = Guard.from_config(LIMITS).wrap(fn)
    answers = [guarded(*args) for _ in range(4)]
    assert answers[:3] == ["page"] * 3
    assert answers[3].startswith(f"loopfuse refused this {name} call")


def test_wrapping_what_cannot_be_called_is_a_type_error() -> None:
    for tool in (None, "t"):
        with pytest.raises(TypeError, match=r"Guard\.wrap needs a callable, not an object of type int"):
            Guard().wrap(cast(Any, 5), tool=tool)


class Repo:
    def __init__(self) -> None:
        self.reads = 0

    @Guard.from_config(LIMITS).wrap
    def read(self, path: str) -> str:
        self.reads += 1
        return "text"


def test_a_method_guarded_in_its_class_body_is_judged_by_its_instance_and_arguments() -> None:
    """Its ``self`` could not be judged: every call ran, allowed unjudged, in silence."""
    repo, other = Repo(), Repo()
    answers = [repo.read("README") for _ in range(5)]
    assert answers[:3] == ["text"] * 3 and answers[3].startswith("loopfuse refused this read call")
    assert other.read("README") == "text"  # another object: another call


def test_partials_and_methods_of_other_objects_are_other_calls() -> None:
    """A partial's frozen arguments and a bound method's object were not part of the call."""
    guard = Guard.from_config(LIMITS)
    answers = [guard.wrap(functools.partial(fetch, f"https://{n}"))() for n in range(8)]
    answers += [guard.wrap(Fetcher().get)("https://a") for _ in range(8)]
    assert answers == ["page"] * 16


class AsyncFetcher:
    async def __call__(self, url: str) -> str:
        return "page"


async def test_a_callable_object_with_an_async_call_is_wrapped_as_async() -> None:
    guarded = Guard.from_config(LIMITS).wrap(AsyncFetcher())
    answers = [await guarded("https://a") for _ in range(4)]
    assert answers[:3] == ["page"] * 3 and answers[3].startswith("loopfuse refused this AsyncFetcher call")


def test_static_and_class_methods_are_guarded_inside() -> None:
    guard = Guard.from_config(LIMITS)

    class Tools:
        @guard.wrap
        @staticmethod
        def ping(host: str) -> str:
            return "pong"

        @guard.wrap
        @classmethod
        def version(cls) -> str:
            return "1.0"

    pings, versions = [Tools.ping("h") for _ in range(4)], [Tools().version() for _ in range(4)]
    assert pings[:3] == ["pong"] * 3 and pings[3].startswith("loopfuse refused this ping call")
    assert versions[:3] == ["1.0"] * 3 and versions[3].startswith("loopfuse refused this version call")


def test_wrapping_twice_with_one_guard_counts_each_call_once() -> None:
    guard = Guard.from_config(LIMITS)
    once = guard.wrap(fetch)
    assert guard.wrap(once) is once
    assert [once("u") for _ in range(4)][:3] == ["page"] * 3


def test_a_class_or_a_generator_function_is_a_type_error() -> None:
    def pages(n: int) -> Any:
        yield from range(n)

    async def chunks(n: int) -> Any:
        yield n

    for fn, says in ((Repo, "not the class Repo"), (pages, "generator function pages"), (chunks, "chunks")):
        with pytest.raises(TypeError, match=says):
            Guard().wrap(fn)


async def test_a_warning_leaves_a_coroutine_a_sync_function_returns_to_be_awaited() -> None:
    """With ``warn_at``, the coroutine was replaced by its text: its work never ran."""
    fetched: list[str] = []

    async def fetch(q: str) -> str:
        fetched.append(q)
        return "found"

    guard = Guard.from_config({"duplicate": {"warn_at": 2}})
    search = guard.wrap(lambda q: fetch(q), tool="search", agent="a")
    answers = [await search(f"q{n % 2}") for n in range(6)]
    assert answers == ["found"] * 6 and len(fetched) == 6
