"""An exception that is not an ``Exception`` (Ctrl-C, ``SystemExit``, a task's own
``BaseException``) raised by the caller's objects leaves the guard as it came, before the call
is counted: failing open covers what the guard cannot judge, never a request to stop."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import pytest

from tests.store_fixtures import GuardFactory


class Interrupting(Mapping[str, Any]):
    """Arguments read as a mapping whose reading raises ``raised``."""

    def __init__(self, raised: BaseException) -> None:
        self.raised = raised

    def __getitem__(self, key: str) -> Any:
        raise self.raised

    def __iter__(self) -> Iterator[str]:
        raise self.raised

    def __len__(self) -> int:
        raise self.raised


class Stop(BaseException):
    """A host's own way to stop a task."""


@pytest.mark.parametrize("raised", [KeyboardInterrupt(), SystemExit(3), GeneratorExit(), Stop()], ids=type)
def test_a_request_to_stop_raised_by_the_arguments_leaves_the_guard_uncounted(
    make_guard: GuardFactory, raised: BaseException
) -> None:
    guard = make_guard({"duplicate": {"limit": 2}})
    assert guard.check("read", {"path": "a"}, "a").allowed
    with pytest.raises(type(raised)):
        guard.check("read", Interrupting(raised), "a")
    assert [guard.check("read", {"path": "a"}, "a").allowed for _ in range(2)] == [True, False]
    assert guard.stats()["fail_open"] == {}
