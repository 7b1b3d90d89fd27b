"""The Guard: every breaker in one place, consulted before each tool call."""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Hashable, Iterable, Mapping
from typing import Any, TypeVar, overload

from ._agents import AgentIdentityError
from ._awaited import AwaitedCalls
from ._calls import CallKey
from ._guard_events import GuardEvents, checked_listeners
from ._invalid_turns import InvalidTurns
from ._messages import STORE_DENIED, denial_message
from ._overrides import Overrides, allow_next_logged, paused_logged
from ._result_reporting import ResultReporting
from ._rounds import Rounds
from ._shown import TOOL_SHOWN, shown_tool
from ._store_lifecycle import StoreLifecycle
from ._untrusted import BAD_TOOL, tool_name
from ._wrapping import CURRENT_SESSION, guarded, wrapped_tool
from .breakers import Breaker
from .breakers._warn import WARNING_TEXT
from .breakers.build import build_breakers, build_warners
from .breakers.custom import custom_breakers, custom_messages
from .breakers.invalid import InvalidTurnBreaker
from .checks import check_list, check_store_policy, fail, log_write_problem
from .config import GuardConfig, find_config_file, in_file, load_config_file, parse_config
from .decision import Decision, Denial
from .errors import ConfigError
from .identity import CallIdentity
from .incidents import IncidentLog
from .listeners import GuardListener
from .stores import open_store, store_spec
from .stores.base import Outcome, Store, StoreUnavailableError

__all__ = ["Guard"]

F = TypeVar("F", bound=Callable[..., Any])


class Guard(InvalidTurns, ResultReporting, StoreLifecycle):
    """Decides, in code, whether an agent's next tool call may run.

    Breakers are evaluated in the order of ``loopfuse.breakers.registry.REGISTRY``: the call
    cap, the window breaker (``duplicate``), the loop brake (``repeat``), ``same_error``,
    ``stall``, ``near_duplicate``, ``cycle``, ``failures``, then your own (``breakers=``). The first denial
    wins; a denied call is recorded by no breaker, so it never counts. Thread-safe: the
    in-process store decides each call under one lock and the Redis store in one atomic
    script, so concurrent checks for one agent are exact. In shadow mode (``[guard] mode =
    "shadow"``) every decision is evaluated and logged the same way, but the call is allowed (``Decision.shadow`` tells it apart).
    """

    def __init__(
        self,
        config: GuardConfig | None = None,
        *,
        listeners: Iterable[GuardListener] = (),
        clock: Callable[[], float] = time.monotonic,
        store: str | Any = None,
        on_store_error: str | None = None,
        breakers: Iterable[Breaker] = (),
    ) -> None:
        """``store`` (a URL or a store object) and ``on_store_error`` ("allow" or "deny")
        override the ``[store]`` section; by default state lives in process (``memory://``).
        ``breakers`` are your own, evaluated after the configured ones (on Redis, those whose
        class brings its Lua fragment, ``lua_file``: the store raises ``ConfigError`` for others)."""
        if not callable(clock):
            raise ConfigError(
                f"clock = {clock!r} is not allowed: expected a function returning seconds (time.monotonic)"
            )
        self.config = _config(config)
        cb, settings = self.config.circuit_breaker, self.config.guard
        incidents = _incident_log(cb.incident_log)
        self._events = GuardEvents(checked_listeners(listeners), incidents, settings.mode == "shadow")
        configured, own = build_breakers(self.config), tuple(check_list("breakers", breakers))
        breakers = (*configured, *custom_breakers(own, self._events.breaker_failed, configured))
        self._own_messages = custom_messages(own)
        warners = build_warners(self.config)
        self._guard_all = bool(breakers)
        invalid = self.config.invalid
        abort_after = settings.abort_after_denials
        self._invalid = InvalidTurnBreaker(invalid.limit, abort_after) if invalid.enabled else None
        self._identity = CallIdentity(self.config)
        self._shadow = settings.mode == "shadow"
        self._only = frozenset(cb.only)
        exempt = self._identity.exempt_tools  # [tools.x] exempt = true
        self._unguarded = exempt if cb.only else exempt | frozenset(cb.exempt)  # `only` wins
        self._template = cb.deny_message
        self._stats = self._events.stats
        self._allow_cache: dict[str, Decision] = {}  # up to 4,096 names of up to TOOL_SHOWN characters
        self._overrides = Overrides()
        self._awaited = AwaitedCalls()
        cycle = self.config.cycle
        self._rounds = Rounds(
            settings.max_agents,
            cycle.min_repeats if cycle.enabled else None,
            settings.abort_after_denials or 0,
            settings.agent_idle_seconds,
            clock,
        )
        spec = store_spec(self.config, breakers, clock, self._result_lost, warners)
        self._store: Store = open_store(store or self.config.store.url, spec)
        policy = on_store_error or self.config.store.on_store_error
        self._on_store_error = check_store_policy("store", "on_store_error", policy)

    @property
    def listeners(self) -> list[GuardListener]:
        """The listeners called on every decision (a list: append to it)."""
        return self._events.listeners

    @listeners.setter
    def listeners(self, listeners: list[GuardListener]) -> None:
        self._events.listeners = listeners

    @classmethod
    def from_config(cls, mapping: Mapping[str, Any], **kwargs: Any) -> Guard:
        """A guard from a mapping of sections (``circuit_breaker``, ``loop_brake``, ``guard``)."""
        return cls(parse_config(mapping), **kwargs)

    @classmethod
    def from_file(cls, path: str | os.PathLike[str], **kwargs: Any) -> Guard:
        """A guard from a TOML file (``[tool.loopfuse]`` in pyproject.toml), JSON or YAML file;
        a ``ConfigError`` names the file."""
        mapping = load_config_file(path)
        with in_file(path):
            return cls.from_config(mapping, **kwargs)

    @classmethod
    def discover(cls, path: str | os.PathLike[str] | None = None, **kwargs: Any) -> Guard:
        """A guard from the first configuration found (see ``find_config_file``), else defaults."""
        found = find_config_file(path)
        return cls.from_file(found, **kwargs) if found is not None else cls(**kwargs)

    def check(
        self, tool: str, args: Any = None, agent: Any = "default", *, round: Hashable | None = None
    ) -> Decision:
        """Whether ``agent`` may call ``tool`` with ``args`` now; records the call if so.

        ``round`` names the model turn that issued the call, when the host knows it (any
        hashable id): identical calls of one round count once, and a round repeating the
        previous round's whole set of calls is a repeated round (``loopfuse._rounds``).
        Never raises on the caller's objects: what cannot be judged is allowed (fail open)."""
        overrides = self._overrides  # its tables tested here: a __bool__ is a call on every check
        if (overrides.paused or overrides.allowances) and overrides.take(agent, tool):
            return self._overridden(tool)
        try:
            call = self._call_key(tool, args, agent)
            if call is None:
                return self._allowed(tool)
            if round is not None:
                deny = self._round_denial(call, args, agent)
                with self._events.listeners_after():  # the round's lock is held while deciding
                    return self._rounds.check(
                        agent, round, call.key, lambda: self._decide(call, args, agent), deny
                    )
            return self._decide(call, args, agent)
        except Exception as exc:  # a caller's object raised where nothing else caught it
            return self._unexpected(exc, tool, agent)

    def _decide(self, call: CallKey, args: Any, agent: Any) -> Decision:
        try:
            outcome = self._store.decide(agent, call)
        except (StoreUnavailableError, AgentIdentityError) as exc:
            return self._store_refused(exc, call, args, agent)
        if self._events.store_down:
            self._store_back()
        return self._decision(call, args, agent, outcome)

    def _round_denial(self, call: CallKey, args: Any, agent: Any) -> Callable[[Outcome], Decision]:
        return lambda outcome: self._decision(call, args, agent, outcome)

    async def acheck(
        self, tool: str, args: Any = None, agent: Any = "default", *, round: Hashable | None = None
    ) -> Decision:
        """``check`` for async hosts."""
        overrides = self._overrides  # its tables tested here: a __bool__ is a call on every check
        if (overrides.paused or overrides.allowances) and overrides.take(agent, tool):
            return self._overridden(tool)
        try:
            call = self._call_key(tool, args, agent)
            if call is None:
                return self._allowed(tool)
            if round is not None:
                deny = self._round_denial(call, args, agent)
                decide = lambda: self._adecide(call, args, agent)  # noqa: E731
                with self._events.listeners_after():
                    return await self._rounds.acheck(agent, round, call.key, decide, deny)
            return await self._adecide(call, args, agent)
        except Exception as exc:  # a caller's object raised where nothing else caught it
            return self._unexpected(exc, tool, agent)

    async def _adecide(self, call: CallKey, args: Any, agent: Any) -> Decision:
        try:
            outcome = await self._store.adecide(agent, call)
        except (StoreUnavailableError, AgentIdentityError) as exc:
            return self._store_refused(exc, call, args, agent)
        if self._events.store_down:
            self._store_back()
        return self._decision(call, args, agent, outcome)

    def _store_refused(self, exc: Exception, call: CallKey, args: Any, agent: Any) -> Decision:
        """The store could not answer (an outage) or could not key the agent (fail open)."""
        if isinstance(exc, StoreUnavailableError):
            return self._store_failed(call.tool, agent, exc)
        if self._events.store_down:
            self._store_back()
        return self._decision(call, args, agent, None)

    def paused(self, agent: Any = "default") -> contextlib.AbstractContextManager[None]:
        """Within the block every call of ``agent`` is allowed and counted by no breaker
        (logged when it starts and ends). In this process only: a Redis store shares no pause."""
        return paused_logged(self._overrides, agent)

    def allow_next(self, agent: Any = "default", tool: str = "", times: int = 1) -> None:
        """Allow the next ``times`` calls of ``tool`` by ``agent`` whatever the breakers say
        (counted by none of them; logged). In this process only. ``ConfigError`` when ``times``
        is not an integer >= 1."""
        allow_next_logged(self._overrides, agent, tool, times)

    @overload
    def wrap(self, fn: F, *, tool: str | None = None, agent: Any = CURRENT_SESSION) -> F: ...

    @overload
    def wrap(
        self, fn: None = None, *, tool: str | None = None, agent: Any = CURRENT_SESSION
    ) -> Callable[[F], F]: ...

    def wrap(
        self, fn: F | None = None, *, tool: str | None = None, agent: Any = CURRENT_SESSION
    ) -> F | Callable[[F], F]:
        """Guard a plain function (sync or async), directly or as a decorator.

        A denied call returns the denial text instead of running the function; once the
        agent escalates, ``LoopAbortedError`` is raised instead. Without ``agent=``, each
        call counts for the agent of the enclosing ``loopfuse._wrapping.agent_session``,
        else ``"default"``.

        Without ``tool=``, the tool is named after ``fn``: its ``__name__`` (a function's, a
        bound method's), a ``functools.partial``'s function's, else a callable object's class
        name. A call is its arguments, a partial's included; a method's call also names its
        instance (``self``: two objects are two calls). ``fn`` not callable, a class or a
        generator function raises ``TypeError``; ``fn`` already guarded by this guard is
        returned as it is.
        """
        if fn is None:
            return lambda f: self.wrap(f, tool=tool, agent=agent)
        if tool is None or (type(tool) is str and not tool):  # no tool.__eq__
            tool = wrapped_tool(fn)
        return guarded(fn, self, tool, agent)

    def stats(self) -> dict[str, Any]:
        """Counters: checks, allowed, skipped, denials by kind, fail-open events, agents."""
        out = self._stats.snapshot()
        out["agents"] = self._store.agent_count()
        return out

    def _call_key(self, tool: Any, args: Any, agent: Any, *, count: bool = True) -> CallKey | None:
        """The call's key, or None when the call is not guarded or cannot be judged."""
        if type(tool) is not str:
            tool = tool_name(tool)
            if tool is None:
                self._fail_open("tool_name", BAD_TOOL, agent, checked=count)
                return None
        if not self._guard_all or tool in self._unguarded or (self._only and tool not in self._only):
            if count:
                self._stats.skipped()
            return None
        call = self._identity.key(tool, {} if args is None else args)
        if call is None:
            self._fail_open("unserializable", tool, agent, checked=count)
        return call

    def _overridden(self, tool: str) -> Decision:
        self._stats.skipped()
        return self._allowed(tool)

    def _allowed(self, tool: Any) -> Decision:
        """The (immutable, shared) allowing decision for ``tool``."""
        if type(tool) is not str:
            name = tool_name(tool)
            tool = BAD_TOOL if name is None else name
        decision = self._allow_cache.get(tool)
        if decision is None:
            decision = Decision(True, tool)
            if len(tool) <= TOOL_SHOWN and len(self._allow_cache) < 4096:  # no made-up long names
                self._allow_cache[tool] = decision
        return decision

    def _store_back(self) -> None:
        """The store answered again after an outage (callers test ``store_down`` first: a
        method call on every check costs more than the test)."""
        self._events.store_answered(self._store.url)

    def _store_failed(self, tool: str, agent: Any, exc: StoreUnavailableError) -> Decision:
        """One warning per outage; then allow (counted as fail-open) or deny per policy."""
        allowing = self._on_store_error == "allow"
        first = self._events.store_failed(exc, allowing)
        if allowing:
            self._fail_open("store", tool, agent)
            return self._allowed(tool)
        self._stats.denial("store", False)
        text = STORE_DENIED.format(tool=shown_tool(tool))
        decision = Decision(self._shadow, tool, text, "store", shadow=self._shadow)  # shadow denies nothing
        self._notify("on_deny", decision, agent, first)
        self._notify("on_check", decision, agent)  # after on_deny, as for a breaker's denial
        return decision

    def _result_lost(self, tool: str, agent: Any, exc: StoreUnavailableError) -> None:
        self._events.result_lost(tool, agent, exc)

    def _decision(self, call: CallKey, args: Any, agent: Any, outcome: Outcome | None) -> Decision:
        tool = call.tool
        if outcome is None:
            self._fail_open("agent_identity", tool, agent)
            return self._allowed(tool)
        denial = outcome.denial
        if denial is None:
            self._stats.count_allowed()
            if outcome.warning is not None:
                decision = self._warned(tool, outcome.warning)
            else:  # _allowed, its cache read here: a call on every allowed check
                cached = self._allow_cache.get(tool)
                decision = self._allowed(tool) if cached is None else cached
            if self._awaited.active:
                self._awaited.keep(args, call)
        else:
            self._stats.denial(denial.kind, outcome.escalate)
            decision = Decision(
                self._shadow,
                tool,
                self._message(tool, denial),
                denial.kind,
                denial.count,
                denial.limit,
                outcome.escalate and not self._shadow,
                self._shadow,
                denial.rule,
            )
            self._after_denial(decision, agent, denial, outcome)
        if self._events.listeners:  # not the property: a call on every check
            self._notify("on_check", decision, agent)
        return decision

    def _warned(self, tool: str, warning: Denial) -> Decision:
        """An allowed call with the warning a breaker's ``warn_at`` gives (none in shadow mode:
        shadow never changes what the model sees)."""
        self._stats.warning(warning.kind)
        if self._shadow:
            return self._allowed(tool)
        # A breaker at or below warn_at would have denied: a warning's limit is always warn_at.
        count, warn_at = warning.count, warning.limit
        text = WARNING_TEXT.format(tool=shown_tool(tool), kind=warning.kind, count=count, warn_at=warn_at)
        return Decision(True, tool, warning=text)

    def _message(self, tool: str, denial: Denial) -> str:
        windows = self.config.circuit_breaker.window, self.config.near_duplicate.window
        template = self._template or self._own_messages.get(denial.kind)
        return denial_message(template, tool, denial, window=windows[0], near_window=windows[1])

    def _after_denial(self, decision: Decision, agent: Any, denial: Denial, outcome: Outcome) -> None:
        self._events.denied(decision, agent, denial, outcome)

    def _unexpected(self, exc: Exception, tool: Any, agent: Any, *, checked: bool = True) -> Decision:
        """Fail open on an exception nothing else caught."""
        self._events.unexpected(exc)
        name = tool_name(tool)
        name = BAD_TOOL if name is None else name
        self._fail_open("error", name, agent, checked=checked)
        return self._allowed(name)

    def _fail_open(self, reason: str, tool: str, agent: Any, *, checked: bool = True) -> None:
        self._events.fail_open(reason, tool, agent, checked=checked)

    def _notify(self, hook: str, *args: Any) -> None:
        self._events.notify(hook, *args)


def _config(config: Any) -> GuardConfig:
    """``config``, or the defaults for None; ``ConfigError`` says how to pass anything else."""
    if config is None:
        return GuardConfig()
    if isinstance(config, GuardConfig):
        return config
    raise ConfigError(
        f"config = {type(config).__name__} is not allowed: expected a GuardConfig (a mapping of "
        "sections goes to Guard.from_config, a file's path to Guard.from_file)"
    )


def _incident_log(path: str | None) -> IncidentLog | None:
    """The incident log at ``path``; ``ConfigError`` when this process cannot write it."""
    problem = log_write_problem(path) if path else None
    if problem is not None:
        raise fail("guard", "incident_log", path, problem)
    return IncidentLog(path) if path else None
