"""The Redis store: one agent's state shared by every process and host, decided atomically.

A tool call is one round trip: a Lua script (``lua/decide.lua``) applies the results held
back for the agent (``lua/observe.lua``, ``redis_held``), then evaluates the guard's breakers in
order on the agent's keys and records the call only if all allow. A reported result is held back
until the agent's next check, or goes on its own after ``result_flush_delay`` seconds, at
``flush`` or ``close``. An agent's state is one hash, ``<prefix>{<agent id>}:s`` (the braces
keep Redis Cluster's hash slot of a key the agent's), read and written once per round trip; it
expires after ``idle_expiry`` without use.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import time
from typing import Any, cast

try:
    from redis.exceptions import ConnectionError as RedisConnectionError
    from redis.exceptions import MaxConnectionsError, RedisError, ResponseError
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError("the Redis store needs redis-py: pip install 'loopfuse[redis]'") from exc

from .._calls import CallKey
from .._state import ToolResult
from ..checks import redacted
from ..decision import Denial, Kind
from ..errors import ConfigError
from .base import ALLOWED, Outcome, StoreSpec, StoreUnavailableError
from .redis_agents import agent_id, glob_escape
from .redis_held import Held, HeldResults
from .redis_io import AsyncClientIO, AsyncWireIO, async_io_for, io_for, open_async_io, open_io
from .redis_scripts import INVALID_SCRIPT, SUPPORTED_KINDS, ScriptSet, supported_breakers
from .redis_wire import Script

__all__ = ["SUPPORTED_KINDS", "RedisStore", "agent_id", "redacted"]

# The longest expiry the scripts set (about 317 years): Lua writes a larger number of
# milliseconds in exponent form ("1e+17"), which PEXPIRE refuses.
_TTL_MS_MAX = 10**13

_NEAR_WANTED = 1  # decide.lua's reply: send the call again with its near-duplicate key


class RedisStore:
    """Agent state in Redis. Build it with ``from_url`` or ``from_client``; the guard binds it
    to its breakers (``Guard(config, store=RedisStore.from_client(client))``).

    A failed or slow round trip raises ``StoreUnavailableError`` (the guard applies its
    ``on_store_error`` policy); for ``retry_interval`` seconds afterwards checks fail at once
    without touching the network, then the next check tries Redis again.
    """

    def __init__(
        self,
        *,
        url: str | None = None,
        client: Any = None,
        async_client: Any = None,
        prefix: str | None = None,
        idle_expiry: float | None = None,
        retry_interval: float = 0.5,
    ) -> None:
        self.url = redacted(url) if url else "redis (client)"
        self._raw_url = url
        self._client = client
        self._async_client = async_client
        self._prefix = prefix
        self._idle_expiry = idle_expiry
        self.retry_interval = retry_interval
        self._bound = False

    @classmethod
    def from_url(cls, url: str, **kwargs: Any) -> RedisStore:
        """A store that connects to ``url`` (``redis://``, ``rediss://``, ``unix://``) itself,
        with the guard's ``[store]`` timeouts and pool; the URL's query (``max_connections``,
        ``pool_timeout``, ``socket_timeout``, ``socket_connect_timeout``) overrides them."""
        return cls(url=url, **kwargs)

    @classmethod
    def from_client(cls, client: Any, async_client: Any = None, **kwargs: Any) -> RedisStore:
        """A store over a ``redis.Redis`` the host already has (its timeouts and pool apply:
        give it a ``BlockingConnectionPool`` for many concurrent callers); ``acheck`` uses
        ``async_client`` when given, else runs the sync client in a thread."""
        return cls(client=client, async_client=async_client, **kwargs)

    def bind(self, spec: StoreSpec) -> RedisStore:
        """A copy evaluating ``spec.breakers``; ``ConfigError`` names a custom breaker kind
        (``redis_scripts.supported_breakers``)."""
        breakers = supported_breakers(spec)
        bound = copy.copy(self)
        bound._bind(spec, breakers)
        return bound

    def _bind(self, spec: StoreSpec, breakers: tuple[Any, ...]) -> None:
        self._bound = True
        self._abort_after = spec.abort_after
        self._spec = spec
        self._key_prefix = self._prefix if self._prefix is not None else spec.prefix
        expiry = self._idle_expiry if self._idle_expiry is not None else spec.idle_seconds
        self._ttl_ms = max(1, round(min(expiry, _TTL_MS_MAX / 1000) * 1000))
        self._scripts = ScriptSet(breakers, spec.window, self._ttl_ms, spec.warners)
        scripts, library = self._scripts, self._scripts.library if spec.redis_functions else ""
        self._decide = Script(scripts.decide, library, scripts.functions[0])
        self._flush = Script(scripts.flush, library, scripts.functions[1])
        self._invalid = Script(INVALID_SCRIPT)
        self._io = (
            open_io(self._url(), self._pool_defaults(), self._ensure_up)
            if self._client is None
            else io_for(self._client)
        )
        self._held = HeldResults(spec.result_flush_delay, self._flush_agent, spec.on_result_lost)
        self._async: dict[asyncio.AbstractEventLoop, AsyncWireIO] = {}
        self._retry_at = 0.0
        self._near = self._scripts.near_from_start
        client = self._async_client
        self._user_async = async_io_for(client) if client is not None else None

    def _url(self) -> str:
        assert self._raw_url is not None
        return self._raw_url

    def _pool_defaults(self) -> dict[str, Any]:
        """The pool's ``[store]`` settings: bounded timeouts, a blocking pool (a check waits up
        to ``pool_timeout`` for a busy connection); the URL's query overrides them
        (``redis_pool.pool_options``: ``ConfigError`` names a query value that is not allowed)."""
        spec = self._spec
        return {
            "socket_timeout": spec.timeout,
            "socket_connect_timeout": spec.connect_timeout,
            "max_connections": spec.max_connections,
            "timeout": spec.pool_timeout,
        }

    def decide(self, agent: Any, call: CallKey) -> Outcome | None:
        """The breakers' verdict on ``call`` for ``agent``, recorded atomically if allowed; the
        round trip first applies the results held back for the agent (``record_result``)."""
        name = agent_id(agent)
        keys = self._keys_of(name)
        self._ensure_up()
        flight = self._held.carrying(name)
        with flight as held:
            try:
                reply = self._io.script(self._decide, keys, self._check(call, held))
                if reply == _NEAR_WANTED:
                    self._near = True
                    reply = self._io.script(self._decide, keys, self._check(call, []))
            except StoreUnavailableError:  # found down while this waited for a connection
                flight.unsent()
                raise
            except (RedisError, OSError) as exc:
                raise self._failed(exc) from exc
        return self._outcome(reply, call.tool)

    def record_result(self, agent: Any, call: CallKey, result: ToolResult) -> bool:
        """Let the breakers observe what ``call`` returned: held back and sent with the agent's
        next round trip (a check, a flush, after ``result_flush_delay``), applied atomically
        there. False when ``agent`` cannot be keyed. Never raises: a result Redis does not take
        is reported to ``StoreSpec.on_result_lost``."""
        urgent = self._hold(agent, call, result)
        for name in urgent or ():
            self._flush_agent(name)
        return urgent is not None

    def note_invalid(self, agent: Any) -> int | None:
        """The agent's invalid turns in a row, this one included (``lua/invalid.lua``); None
        when it cannot be keyed; ``StoreUnavailableError`` when Redis fails. Held results stay
        held: they change nothing the streak reads (``calls``, ``ia``, ``inv``)."""
        try:
            keys = self._keys(agent)
        except ConfigError:
            return None
        self._ensure_up()
        try:
            streak = self._io.script(self._invalid, keys, [self._ttl_ms])
        except (RedisError, OSError) as exc:
            raise self._failed(exc) from exc
        self._retry_at = 0.0
        return int(streak)

    async def anote_invalid(self, agent: Any) -> int | None:
        """``note_invalid`` in a worker thread: an invalid turn is rare, the event loop never waits."""
        return await asyncio.to_thread(self.note_invalid, agent)

    async def adecide(self, agent: Any, call: CallKey) -> Outcome | None:
        name = agent_id(agent)
        keys = self._keys_of(name)
        self._ensure_up()
        io = await self._async_io()
        if io is None:
            return await asyncio.to_thread(self.decide, agent, call)
        flight = await self._held.acarrying(name)
        with flight as held:
            try:
                reply = await io.script(self._decide, keys, self._check(call, held), flight.unsent)
                if reply == _NEAR_WANTED:
                    self._near = True
                    reply = await io.script(self._decide, keys, self._check(call, []))
            except StoreUnavailableError:  # found down while this waited for a connection
                flight.unsent()
                raise
            except (RedisError, OSError) as exc:
                raise self._failed(exc) from exc
        return self._outcome(reply, call.tool)

    async def arecord_result(self, agent: Any, call: CallKey, result: ToolResult) -> bool:
        """``record_result`` for async hosts: only holds the result back (no network), except
        when the agent holds too many, which go at once on the asyncio client."""
        urgent = self._hold(agent, call, result)
        for name in urgent or ():
            await self._aflush_agent(name)
        return urgent is not None

    def flush(self) -> None:
        """Send every held result now, each agent's in one round trip. Never raises: results
        Redis does not take are reported to ``StoreSpec.on_result_lost``."""
        for name in self._held.agents():
            self._flush_agent(name)

    async def aflush(self) -> None:
        """``flush`` on the asyncio client (in a thread when the host gave none)."""
        for name in self._held.agents():
            await self._aflush_agent(name)

    def _hold(self, agent: Any, call: CallKey, result: ToolResult) -> list[str] | None:
        """Hold the result for the agent's next round trip; the agents whose results must go
        now (``HeldResults.add``); None when ``agent`` cannot be keyed."""
        try:
            name = agent_id(agent)
        except ConfigError:
            return None
        assert self._bound, "RedisStore.bind(spec) first (the guard does it)"
        self._near = True  # from now on checks send near-duplicate keys (see ``_check``)
        return self._held.add(name, Held(call.tool, agent, self._scripts.result_arg(call, result)))

    def _flush_agent(self, name: str) -> None:
        """Send the agent's held results; never raises (``carrying`` reports them lost)."""
        with contextlib.suppress(Exception), self._held.carrying(name) as held:
            if held:
                self._ensure_up()
                try:
                    self._io.script(self._flush, self._keys_of(name), _carried(held))
                except (RedisError, OSError) as exc:
                    raise self._failed(exc) from exc
                self._retry_at = 0.0

    async def _aflush_agent(self, name: str) -> None:
        io = await self._async_io()
        if io is None:
            await asyncio.to_thread(self._flush_agent, name)
            return
        flight = await self._held.acarrying(name)
        with contextlib.suppress(Exception), flight as held:
            if held:
                self._ensure_up()
                try:
                    await io.script(self._flush, self._keys_of(name), _carried(held), flight.unsent)
                except (RedisError, OSError) as exc:
                    raise self._failed(exc) from exc
                self._retry_at = 0.0

    async def _async_io(self) -> AsyncWireIO | AsyncClientIO | None:
        """The way to Redis from the running event loop (connections cannot change loops): the
        store's own pool on it, or the host's asyncio client; None when the host passed a sync
        client only. Pools of loops closed since are dropped (``asyncio.run`` closed their
        connections on its way out)."""
        if self._raw_url is None:
            return self._user_async
        loop = asyncio.get_running_loop()
        io = self._async.get(loop)
        if io is None:
            for other in list(self._async):  # a copy: other threads may run loops of their own
                if other.is_closed():
                    self._async.pop(other, None)
            io = self._async.setdefault(
                loop, await open_async_io(self._url(), self._pool_defaults(), self._ensure_up)
            )
        return io

    def _keys(self, agent: Any) -> list[str]:
        return self._keys_of(agent_id(agent))

    def _keys_of(self, name: str) -> list[str]:
        """The agent's one key, its state hash (``lua/decide.lua``)."""
        assert self._bound, "RedisStore.bind(spec) first (the guard does it)"
        return [f"{self._key_prefix}{{{name}}}:s"]

    def _check(self, call: CallKey, held: list[Held]) -> list[Any]:
        """The check's arguments, then the held results it carries. The near-duplicate key is
        computed only once this guard has seen a result (or was asked for it): until an agent
        reports results, near_duplicate with ``only_with_results`` neither judges nor records
        its calls, as in process. (Held results imply ``_near``: ``_hold`` sets it first.)"""
        return self._scripts.carrying(self._scripts.check_args(call, self._near), [h.arg for h in held])

    def _outcome(self, reply: Any, tool: str) -> Outcome:
        self._retry_at = 0.0
        if reply == 0:
            return ALLOWED
        if reply[0] == 0:  # allowed, with the warning of a breaker's warn_at
            _, kind, count, limit, code = reply
            name = cast(Kind, _text(kind))
            return Outcome(
                None,
                warning=Denial(name, int(count), int(limit), self._scripts.rule(name, _text(code), tool)),
            )
        kind, count, limit, first, denials, code = reply
        name = cast(Kind, _text(kind))
        denial = Denial(name, int(count), int(limit), self._scripts.rule(name, _text(code), tool))
        abort = self._abort_after
        return Outcome(denial, first == 1, abort is not None and denials >= abort, denials == abort)

    def _ensure_up(self) -> None:
        if self._retry_at and time.monotonic() < self._retry_at:
            raise StoreUnavailableError(f"{self.url} did not answer recently; next attempt shortly")

    def _failed(self, exc: BaseException) -> StoreUnavailableError:
        """Redis could not answer: checks fail at once for ``retry_interval`` seconds, except
        when only the wait for a free connection ran out (load, not an outage) or one agent's
        key holds another type (someone else's key under the prefix: that agent's trouble)."""
        if not _pool_exhausted(exc) and not _wrong_type(exc):
            self._retry_at = time.monotonic() + self.retry_interval
        return StoreUnavailableError(f"{self.url}: {type(exc).__name__}: {exc}")

    def forget(self, agent: Any) -> None:
        """Delete the agent's keys, and drop its held results (applying them first would change
        nothing that stays); ``StoreUnavailableError`` when Redis cannot be reached."""
        name = agent_id(agent)
        with self._held.carrying(name):
            try:
                self._io.delete(self._keys_of(name))
            except (RedisError, OSError) as exc:
                raise self._failed(exc) from exc

    async def aforget(self, agent: Any) -> None:
        """``forget`` on the asyncio client (in a thread when the host passed a sync client only)."""
        name = agent_id(agent)
        io = await self._async_io()
        if io is None:
            await asyncio.to_thread(self.forget, agent)
            return
        with await self._held.acarrying(name):
            try:
                await io.delete(self._keys_of(name))
            except (RedisError, OSError) as exc:
                raise self._failed(exc) from exc

    def agent_count(self) -> int:
        """Agents with state under this prefix (a SCAN: costs one pass over the keyspace of
        the node the client talks to); 0 when Redis cannot be reached."""
        pattern = glob_escape(self._key_prefix) + "{*}:s"
        try:
            return self._io.count(pattern)
        except (RedisError, OSError, StoreUnavailableError):  # the last: found down while queued
            return 0

    def close(self) -> None:
        """Send the held results (``flush``), then close the connections this store opened (not
        those of a client the host passed)."""
        if self._bound:
            self.flush()
            self._held.close()
            self._io.close()

    async def aclose(self) -> None:
        """``close`` from async code: sends the held results on the asyncio connections
        (``aflush``), and also closes those this store opened on the running loop."""
        if self._bound:
            await self.aflush()
            io = self._async.pop(asyncio.get_running_loop(), None)
            if io is not None:
                await io.aclose()
        self.close()


def _carried(held: list[Held]) -> list[Any]:
    """A flush's arguments: the held results and their count (``lua/pending.lua``)."""
    return ScriptSet.carrying([], [h.arg for h in held])


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _pool_exhausted(exc: BaseException) -> bool:
    """Every connection was busy: the blocking pool waited ``pool_timeout`` in vain, or a
    host's client has a pool that does not wait."""
    if isinstance(exc, MaxConnectionsError):
        return True
    return isinstance(exc, RedisConnectionError) and str(exc) == "No connection available."


def _wrong_type(exc: BaseException) -> bool:
    """Redis answered that a key of the agent's holds another type of value."""
    return isinstance(exc, ResponseError) and "WRONGTYPE" in str(exc)
