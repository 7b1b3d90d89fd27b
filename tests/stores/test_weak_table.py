"""The identity-keyed weak table behind object agents and the adapters' run scopes."""

from __future__ import annotations

import gc

import pytest

from loopfuse._weak_table import WeakIdentityTable


class Run:
    __hash__ = None  # type: ignore[assignment]  # unhashable, as many run objects are


def test_a_value_lives_exactly_as_long_as_its_object() -> None:
    table: WeakIdentityTable[list[int]] = WeakIdentityTable()
    run, other = Run(), Run()
    table.value(run, list).append(1)
    assert table.value(run, list) == [1] and table.get(other) is None
    del run
    gc.collect()
    assert len(table) == 0


def test_pop_drops_a_value_and_says_whether_there_was_one() -> None:
    table: WeakIdentityTable[int] = WeakIdentityTable()
    run = Run()
    table.value(run, lambda: 7)
    assert table.pop(run) and not table.pop(run) and table.get(run) is None


def test_an_object_that_cannot_be_weakly_referenced_is_refused() -> None:
    with pytest.raises(TypeError):
        WeakIdentityTable[int]().value(("a", "tuple"), lambda: 1)
