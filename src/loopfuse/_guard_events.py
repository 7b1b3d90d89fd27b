"""What a guard tells the world about its decisions: counters, listeners, the log line and
incident record of an agent's first denial of a kind, and the store's health (one warning
per outage). Private: ``Guard`` is the public face."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar
from typing import Any

from ._agents import agent_label
from ._shown import logged, shown_tool
from ._stats import GuardStats
from .checks import check_list
from .decision import Decision, Denial
from .errors import ConfigError
from .incidents import IncidentLog, incident_record, logger
from .listeners import GuardListener
from .stores.base import Outcome, StoreUnavailableError

__all__ = ["GuardEvents", "checked_listeners", "log_name"]

# The listener calls a block of ``listeners_after`` holds back, with the guard's events each
# is for (the block may check through several guards); per thread and per asyncio task.
_HELD: ContextVar[list[tuple[GuardEvents, str, tuple[Any, ...]]] | None] = ContextVar(
    "loopfuse_held_listener_calls", default=None
)


_HOOKS = tuple(name for name in vars(GuardListener) if name.startswith("on_"))


def checked_listeners(listeners: Any) -> list[GuardListener]:
    """``listeners`` as a list; a ``ConfigError`` names one with none of the hooks (a function)."""
    found: list[GuardListener] = check_list("listeners", listeners)
    for index, listener in enumerate(found):
        if not _has_hooks(listener):
            raise ConfigError(
                f"listeners[{index}] = {type(listener).__name__} is not allowed: expected a "
                f"GuardListener (an object with any of the methods {', '.join(_HOOKS)})"
            )
    return found


def _has_hooks(listener: Any) -> bool:
    try:
        return any(hasattr(listener, hook) for hook in _HOOKS)
    except Exception:  # attributes that raise: contained when called
        return True


class GuardEvents:
    """Counters, listener calls and log lines for one guard. Listener errors are logged,
    never raised."""

    def __init__(self, listeners: list[GuardListener], incidents: IncidentLog | None, shadow: bool) -> None:
        self.listeners = listeners
        self.stats = GuardStats()
        self._incidents = incidents
        self._shadow = shadow
        self.store_down = False  # read on every check: a plain attribute
        self._warned_error = False
        self._failed_breakers: set[str] = set()

    def notify(self, hook: str, *args: Any) -> None:
        held = _HELD.get()
        if held is not None:
            held.append((self, hook, args))
            return
        self._call(hook, args)

    def _call(self, hook: str, args: tuple[Any, ...]) -> None:
        for listener in tuple(self.listeners):  # a listener may remove itself from the list
            try:
                method = getattr(listener, hook, None)  # a listener written before the hook existed
                if method is not None:
                    method(*args)
            except Exception:
                logger.exception("loopfuse: listener %r failed in %s", listener, hook)

    @contextlib.contextmanager
    def listeners_after(self) -> Iterator[None]:
        """Listener calls made in the block wait until it ends: it holds a lock (a round's) that
        a listener checking a call again would wait on forever."""
        if _HELD.get() is not None:
            yield
            return
        held: list[tuple[GuardEvents, str, tuple[Any, ...]]] = []
        token = _HELD.set(held)
        try:
            yield
        finally:
            _HELD.reset(token)
            for events, hook, args in held:
                events._call(hook, args)

    def fail_open(self, reason: str, tool: str, agent: Any, *, checked: bool = True) -> None:
        self.stats.fail_open(reason, checked)
        self.notify("on_fail_open", reason, tool, agent)
        if checked:
            self.notify("on_unjudged_check", reason, tool, agent)

    def denied(self, decision: Decision, agent: Any, denial: Denial, outcome: Outcome) -> None:
        """A denial: logged (and written to the incident log) the first time for its kind,
        ``on_deny`` every time, ``on_escalate`` once per episode."""
        if outcome.first:
            self._report_first(decision.tool, agent, denial)
        self.notify("on_deny", decision, agent, outcome.first)
        if outcome.escalate and outcome.escalation_start is not False:
            self.notify("on_escalate", decision, agent)

    def unexpected(self, exc: Exception) -> None:
        """An exception nothing else caught: logged once, by type only (its text may hold
        argument values)."""
        if not self._warned_error:
            self._warned_error = True
            logger.warning("loopfuse: a call could not be judged (%s); allowing", type(exc).__name__)

    def breaker_failed(self, kind: str, exc: Exception) -> None:
        """One of your breakers raised (it allowed the call): counted, logged once per kind by
        the exception's type only (its text may hold argument values)."""
        self.stats.fail_open("breaker", checked=False)
        if kind not in self._failed_breakers and len(self._failed_breakers) < 64:
            self._failed_breakers.add(kind)
            logger.warning(
                "loopfuse: breaker %s raised %s; it allows such calls", logged(kind), type(exc).__name__
            )

    def store_answered(self, url: str) -> None:
        if self.store_down:
            self.store_down = False
            logger.warning("loopfuse: store %s answers again", url)

    def store_failed(self, exc: StoreUnavailableError, allowing: bool) -> bool:
        """A check the store could not answer; True for the first of an outage (warned)."""
        first = not self.store_down
        if first:
            self.store_down = True
            action = "allowing" if allowing else "denying"
            logger.warning("loopfuse: store failed (%s); %s guarded calls until it answers", exc, action)
        return first

    def result_lost(self, tool: str, agent: Any, exc: StoreUnavailableError) -> None:
        """The store could not take a result: one warning per outage, counted as fail-open."""
        if not self.store_down:
            self.store_down = True
            logger.warning("loopfuse: store failed (%s); results are ignored until it answers", exc)
        self.fail_open("store", tool, agent, checked=False)

    def _report_first(self, tool: str, agent: Any, denial: Denial) -> None:
        label = agent_label(agent)
        logger.warning(
            "loopfuse %s %s for agent %s: %s (%d/%d)",
            "would deny (shadow mode)" if self._shadow else "denied",
            logged(shown_tool(tool)),
            log_name(label),
            denial.kind,
            denial.count,
            denial.limit,
        )
        if self._incidents is None:
            return
        record = incident_record(
            kind=denial.kind, tool=shown_tool(tool), count=denial.count, limit=denial.limit, agent=label
        )
        if not self._incidents.append(record):
            self.fail_open("incident_log", tool, agent, checked=False)


def log_name(label: str | dict[str, list[str]]) -> str:
    """How a log line names an agent: its label when that is a string, else ``<object>``."""
    return logged(label) if isinstance(label, str) else "<object>"
