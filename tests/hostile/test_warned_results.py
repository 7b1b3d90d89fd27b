"""A warning is added to a tool's result in the result's own form; a result that cannot be
read that way (its ``__str__`` or its iteration raises) is returned as it is, never raising."""

from __future__ import annotations

from typing import Any

import pytest

from loopfuse import Guard


class Unprintable:
    def __str__(self) -> str:
        raise RuntimeError("__str__")


class UnreadableDict(dict[str, Any]):
    def keys(self) -> Any:
        raise RuntimeError("keys")

    def __iter__(self) -> Any:
        raise RuntimeError("__iter__")


class UnreadableList(list[Any]):
    def __iter__(self) -> Any:
        raise RuntimeError("__iter__")


@pytest.mark.parametrize("make", [Unprintable, UnreadableDict, UnreadableList])
def test_a_result_that_cannot_take_the_warning_is_returned_unchanged(make: type) -> None:
    guard = Guard.from_config({"duplicate": {"warn_at": 1}})
    results = [make() for _ in range(4)]
    served = iter(results)
    lookup = guard.wrap(lambda q: next(served), tool="lookup", agent="a")
    returned = [lookup(q=1) for _ in range(4)]
    assert all(got is made for got, made in zip(returned, results, strict=True))
