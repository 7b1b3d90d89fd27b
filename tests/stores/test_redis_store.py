"""What only the Redis store does: shared state, key layout, bounds, expiry, URLs, construction."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest
import redis

from loopfuse import ConfigError, Guard
from loopfuse._calls import CallKey
from loopfuse.breakers import WindowBreaker
from loopfuse.stores import StoreSpec, open_store
from loopfuse.stores.redis import RedisStore
from loopfuse.testing import RecordingListener
from tests.store_fixtures import RedisServer, unique_prefix

WINDOW_ONLY = {"circuit_breaker": {"duplicate_limit": 2, "window": 5, "max_calls_per_agent": 0}}


def guard_on(server: RedisServer, prefix: str, mapping: dict[str, Any] | None = None, **kw: Any) -> Guard:
    return Guard.from_config(
        mapping or WINDOW_ONLY, store=RedisStore.from_url(server.url, prefix=prefix), **kw
    )


def test_two_guards_share_one_agent(redis_server: RedisServer) -> None:
    prefix = unique_prefix()
    first, second = guard_on(redis_server, prefix), guard_on(redis_server, prefix)
    assert first.check("read", {"p": 1}, "a") and second.check("read", {"p": 1}, "a")
    assert not first.check("read", {"p": 1}, "a").allowed
    assert not second.check("read", {"p": 1}, "a").allowed
    other = guard_on(redis_server, unique_prefix())
    assert other.check("read", {"p": 1}, "a").allowed  # another prefix is another namespace


def test_first_denial_flag_holds_across_guards(redis_server: RedisServer, tmp_path: Path) -> None:
    prefix, log = unique_prefix(), tmp_path / "incidents.jsonl"
    mapping = {"circuit_breaker": {"duplicate_limit": 1, "incident_log": str(log)}}
    guards = [guard_on(redis_server, prefix, mapping) for _ in range(3)]
    listeners = [RecordingListener() for _ in guards]
    for guard, listener in zip(guards, listeners, strict=True):
        guard.listeners.append(listener)
        guard.check("read", {"p": 1}, "a")
    assert [[e.first for e in listener.of("on_deny")] for listener in listeners] == [[], [True], [False]]
    assert len(log.read_text().splitlines()) == 1


def test_an_agents_state_is_one_key_that_expires(redis_server: RedisServer) -> None:
    prefix = unique_prefix()
    guard = Guard.from_config({"store": {"url": redis_server.url, "prefix": prefix, "idle_expiry": 60}})
    guard.check("read", {"p": 1}, "agent-7")
    guard.record_result("read", {"p": 1}, "text", "agent-7", ok=True)
    guard.check("read", {"p": 2}, "agent-7")
    client = redis_server.client()
    assert client.keys(prefix + "*") == [prefix.encode() + b"{agent-7}:s"]
    assert 55_000 < client.pttl(prefix + "{agent-7}:s") <= 60_000


def test_idle_agent_state_goes_away(redis_server: RedisServer) -> None:
    prefix = unique_prefix()
    store = {"url": redis_server.url, "prefix": prefix, "idle_expiry": 0.3}
    guard = Guard.from_config({**WINDOW_ONLY, "store": store})
    assert [guard.check("read", {"p": 1}, "a").allowed for _ in range(3)] == [True, True, False]
    time.sleep(0.2)
    assert not guard.check("read", {"p": 1}, "a").allowed  # use refreshes the expiry
    time.sleep(0.2)
    assert not guard.check("read", {"p": 1}, "a").allowed
    time.sleep(0.45)
    assert redis_server.client().keys(prefix + "*") == []
    assert guard.check("read", {"p": 1}, "a").allowed


def test_window_stays_bounded(redis_server: RedisServer) -> None:
    prefix = unique_prefix()
    guard = guard_on(redis_server, prefix)
    for i in range(40):
        assert guard.check("read", {"p": i}, "a").allowed
    assert redis_server.client().hstrlen(prefix + "{a}:s", "w") == 5 * 8


def test_agent_count_and_forget(redis_server: RedisServer) -> None:
    guard = guard_on(redis_server, unique_prefix())
    for agent in ("a", "b", "c"):
        guard.check("read", {}, agent)
    assert guard.stats()["agents"] == 3
    guard.forget("b")
    assert guard.stats()["agents"] == 2


class CustomBreaker(WindowBreaker):
    """A breaker of a kind the Redis script does not implement."""

    kind = "custom"  # type: ignore[assignment]


def test_breakers_redis_lacks_are_refused(redis_server: RedisServer) -> None:
    custom: Any = CustomBreaker(2)  # not a Breaker: its kind is none of loopfuse's
    spec = StoreSpec((WindowBreaker(2), custom), window=10, abort_after=None)
    with pytest.raises(ConfigError, match="custom"):
        open_store(redis_server.url, spec)
    assert open_store("memory://", spec) is not None


def test_unix_socket_url(redis_server: RedisServer) -> None:
    guard = Guard.from_config(WINDOW_ONLY, store=redis_server.unix_url)
    agent = unique_prefix()
    assert [guard.check("read", {}, agent).allowed for _ in range(3)] == [True, True, False]
    guard.close()


def test_store_section_in_a_file(redis_server: RedisServer, tmp_path: Path) -> None:
    path = tmp_path / "loopfuse.toml"
    path.write_text(
        f'[circuit_breaker]\nduplicate_limit = 1\n[store]\nurl = "{redis_server.url}"\n'
        f'prefix = "{unique_prefix()}"\non_store_error = "deny"\n'
    )
    guard = Guard.from_file(path)
    assert guard.check("t", {}, "a") and not guard.check("t", {}, "a")
    memory = Guard.from_file(path, store="memory://")
    assert memory.check("t", {}, "a")


@pytest.mark.parametrize(
    ("section", "needle"),
    [
        ({"url": "http://user:s3cret@host/"}, "redis://"),
        ({"on_store_error": "maybe"}, "'allow'"),
        ({"prefix": "a{b}"}, "hash slot"),
        ({"idle_expiry": 0}, ">= 0.001"),
        ({"timeout": -1}, "from 0.001 to 3600"),
    ],
)
def test_bad_store_section(section: dict[str, Any], needle: str) -> None:
    with pytest.raises(ConfigError, match=r"\[store\]") as info:
        Guard.from_config({"store": section})
    assert needle in str(info.value) and "s3cret" not in str(info.value)


@pytest.mark.parametrize(
    ("url", "database"),
    [
        ("redis://127.0.0.1:1/abc", "'abc'"),
        ("redis://127.0.0.1:1/0/1", "'0/1'"),
        ("redis://127.0.0.1:1/-1", "'-1'"),
        ("redis://127.0.0.1:1/?db=-1", "'-1'"),
        ("unix:///tmp/redis.sock?db=one", "'one'"),
    ],
)
def test_a_database_that_is_not_a_number_is_refused_at_construction(url: str, database: str) -> None:
    with pytest.raises(ConfigError, match=r"\[store\] url") as info:
        Guard(store=url)
    assert f"the database {database} is not allowed: expected a number >= 0" in str(info.value)


@pytest.mark.parametrize("url", ["unix://", "unix:///", "unix://?db=0"])
def test_a_unix_url_naming_no_socket_is_refused_at_construction(url: str) -> None:
    """Accepted, every check failed open: there is no socket to connect to."""
    with pytest.raises(ConfigError, match=r"no socket is named: expected unix:///path/to/redis.sock"):
        Guard(store=url)
    with pytest.raises(ConfigError, match=r"no socket is named"):
        Guard.from_config({"store": {"url": url}})


@pytest.mark.parametrize(
    ("query", "says"),
    [
        ("protocol=9", "protocol must be either 2 or 3"),
        ("socket_timeout=1e10", "at most 3600"),
    ],
)
def test_a_url_option_redis_py_refuses_is_a_config_error(query: str, says: str) -> None:
    """``protocol=9`` raised redis-py's own ConnectionError; a huge timeout failed every check."""
    with pytest.raises(ConfigError, match=r"\[store\] url") as info:
        Guard(store=f"redis://127.0.0.1:1/0?{query}")
    assert says in str(info.value)


def test_an_idle_time_past_what_redis_keeps_is_capped(redis_server: RedisServer) -> None:
    """``agent_idle_seconds = 1e308`` raised OverflowError at construction."""
    config = {**WINDOW_ONLY, "guard": {"agent_idle_seconds": 1e308}}
    guard = Guard.from_config(config, store=RedisStore.from_url(redis_server.url, prefix=unique_prefix()))
    assert [guard.check("read", {}, "a").allowed for _ in range(3)] == [True, True, False]
    guard.close()


def test_a_numbered_database_is_allowed() -> None:
    Guard(store="redis://127.0.0.1:1/3").close()


def test_bad_on_store_error_argument() -> None:
    with pytest.raises(ConfigError, match="on_store_error"):
        Guard(on_store_error="ignore")


def test_store_object_over_an_existing_client(redis_server: RedisServer) -> None:
    client = redis.Redis(host="127.0.0.1", port=redis_server.port, socket_timeout=0.5)
    store = RedisStore.from_client(client, prefix=unique_prefix())
    guard = Guard.from_config(WINDOW_ONLY, store=store)
    assert [guard.check("read", {}, "a").allowed for _ in range(3)] == [True, True, False]
    guard.close()
    assert client.ping()  # the host's client stays open


async def test_store_object_with_an_async_client(redis_server: RedisServer) -> None:
    import redis.asyncio as aredis

    client = redis.Redis(host="127.0.0.1", port=redis_server.port)
    aclient = aredis.Redis(host="127.0.0.1", port=redis_server.port)
    guard = Guard.from_config(
        WINDOW_ONLY, store=RedisStore.from_client(client, aclient, prefix=unique_prefix())
    )
    got = [(await guard.acheck("read", {}, "a")).allowed for _ in range(3)]
    assert got == [True, True, False]
    assert not guard.check("read", {}, "a").allowed
    await aclient.aclose()
    client.close()


CLIENT_KINDS = [{"decode_responses": True}, {"protocol": 3}, {"protocol": 3, "decode_responses": True}]


def first_denial(check: Any, report: Any) -> tuple[int, str | None]:
    """The index and kind of the first denied call of a loop of one search, each result reported."""
    for i in range(12):
        decision = check("search", {"q": "the same"}, "a")
        if not decision.allowed:
            return i, decision.kind
        report("search", {"q": "the same"}, "no results", "a", ok=True)
    raise AssertionError("the loop was never denied")


@pytest.mark.parametrize("kind", CLIENT_KINDS, ids=["decoded", "RESP3", "RESP3 decoded"])
async def test_a_hosts_client_of_any_kind_decides_as_in_process(redis_server: RedisServer, kind: Any) -> None:
    """A host's clients that decode replies to str or speak RESP3: the default guard, results
    reported, denies the loop where it does in process, from sync and asyncio code."""
    import redis.asyncio as aredis

    in_process = Guard()
    expected = first_denial(in_process.check, in_process.record_result)
    client, aclient = (
        redis.Redis(port=redis_server.port, **kind),
        aredis.Redis(port=redis_server.port, **kind),
    )
    for reporting in ("sync", "async"):
        guard = Guard(store=RedisStore.from_client(client, aclient, prefix=unique_prefix()))
        if reporting == "sync":
            assert first_denial(guard.check, guard.record_result) == expected
        else:
            assert await afirst_denial(guard) == expected
        await guard.aclose()
        assert guard.stats()["fail_open"] == {}
    await aclient.aclose()
    client.close()


async def afirst_denial(guard: Guard) -> tuple[int, str | None]:
    for i in range(12):
        decision = await guard.acheck("search", {"q": "the same"}, "a")
        if not decision.allowed:
            return i, decision.kind
        await guard.arecord_result("search", {"q": "the same"}, "no results", "a", ok=True)
    raise AssertionError("the loop was never denied")


def connected_clients(server: RedisServer) -> int:
    client = server.client()
    count = int(client.info("clients")["connected_clients"]) - 1  # not this one
    client.close()
    return count


def test_each_event_loops_connections_close_with_it(own_redis: RedisServer) -> None:
    guard = Guard.from_config({**WINDOW_ONLY, "store": {"url": own_redis.url, "prefix": unique_prefix()}})
    got = [asyncio.run(guard.acheck("read", {"p": i}, "a")).allowed for i in range(20)]
    assert got == [True] * 20
    assert connected_clients(own_redis) == 0  # each asyncio.run closed its loop's connection
    assert asyncio.run(guard.acheck("read", {"p": 19}, "a")).allowed  # the 2nd of this call
    assert not guard.check("read", {"p": 19}, "a").allowed  # the 3rd, on the sync pool
    assert connected_clients(own_redis) == 1
    guard.close()
    assert connected_clients(own_redis) == 0


def test_call_key_bytes_round_trip(redis_server: RedisServer) -> None:
    """Keys whose bytes overlap across entries are counted only at entry boundaries."""
    prefix = unique_prefix()
    store = RedisStore.from_url(redis_server.url, prefix=prefix).bind(
        StoreSpec((WindowBreaker(1),), window=10, abort_after=None)
    )
    a = CallKey("t", b"a" * 32, int.from_bytes(b"\x00\x00\x00\x01\x02\x03\x04\x05", "big"))
    b = CallKey("t", b"b" * 32, int.from_bytes(b"\x06\x07\x00\x00\x00\x01\x02\x03", "big"))
    c = CallKey("t", b"c" * 32, int.from_bytes(b"\x04\x05\x06\x07\x08\x09\x0a\x0b", "big"))
    # b then c lays out ... 00 00 00 01 02 03 | 04 05 ... : a's bytes, straddling two entries
    assert store.decide("x", b) is not None and store.decide("x", c) is not None
    outcome = store.decide("x", a)
    assert outcome is not None and outcome.denial is None
    store.close()


def _checks_in_child(guard: Guard, results: Any) -> None:
    decisions = [guard.check("read", {"p": i}, "child").allowed for i in range(200)]
    results.put((all(decisions), guard.stats()["fail_open"]))


def test_a_forked_child_uses_its_own_connections(redis_server: RedisServer) -> None:
    """A child forked after the parent's first round trip must not read the parent's replies."""
    import multiprocessing

    guard = guard_on(
        redis_server, unique_prefix(), {"circuit_breaker": {"max_calls_per_agent": 0, "duplicate_limit": 1}}
    )
    assert guard.check("read", {"p": -1}, "parent").allowed  # the parent's connection is open
    context = multiprocessing.get_context("fork")
    results = context.Queue()
    child = context.Process(target=_checks_in_child, args=(guard, results))
    child.start()
    parent = [guard.check("read", {"p": i}, "parent").allowed for i in range(200)]
    child.join(timeout=60)
    assert child.exitcode == 0 and results.get(timeout=5) == (True, {})
    assert all(parent) and guard.stats()["fail_open"] == {}
    assert not guard.check("read", {"p": 5}, "child").allowed  # the child's calls reached Redis


def test_a_store_outage_denial_reaches_listeners_in_a_denials_order() -> None:
    """``on_check`` came before ``on_deny`` there, after it for a breaker's denial."""
    outage, breaker = RecordingListener(), RecordingListener()
    down = Guard.from_config(
        {"store": {"url": "redis://127.0.0.1:1/0", "on_store_error": "deny"}}, listeners=[outage]
    )
    assert not down.check("read", {}, "a").allowed
    window = Guard.from_config(WINDOW_ONLY, listeners=[breaker])
    [window.check("read", {}, "a") for _ in range(3)]
    assert [e.hook for e in outage.events] == [e.hook for e in breaker.events[-2:]] == ["on_deny", "on_check"]
    down.close()
