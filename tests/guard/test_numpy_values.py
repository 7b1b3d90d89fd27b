"""numpy arrays and scalars in arguments and results: judged as the Python values they hold."""

from __future__ import annotations

from typing import Any

import pytest

from loopfuse._calls import CallKey, canonical_json
from tests.store_fixtures import GuardFactory

from .conftest import run

np = pytest.importorskip("numpy")


class LoudArray(np.ndarray):  # type: ignore[misc, name-defined]
    def tolist(self) -> Any:
        raise AssertionError("the caller's override ran")


VALUES = {
    "array": np.array([[1.5, 2.0], [3.0, 4.25]]),
    "float64": np.float64(0.25),
    "int64": np.int64(7),
    "bool_": np.bool_(True),
    "str_": np.str_("pricing"),
    "array subclass": np.arange(3).view(LoudArray),
}


@pytest.mark.parametrize("value", VALUES.values(), ids=list(VALUES))
def test_a_call_holding_a_numpy_value_is_judged_as_any_call(make_guard: GuardFactory, value: Any) -> None:
    guard = make_guard()
    args = {"x": value, "nested": [value]}
    assert [guard.check("tool", args, "a").allowed for _ in range(8)] == [True] * 6 + [False, False]
    assert guard.stats()["fail_open"] == {}


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (VALUES["array"], "[[1.5,2.0],[3.0,4.25]]"),
        (VALUES["float64"], "0.25"),
        (VALUES["int64"], "7"),
        (VALUES["bool_"], "true"),
        (VALUES["array subclass"], "[0,1,2]"),
        (np.array([], dtype=np.int32), "[]"),
        (np.array(["b", "a"]), '["b","a"]'),  # an array keeps its order: it is not a set
    ],
)
def test_each_numpy_value_is_written_as_the_python_value_it_holds(value: Any, text: str) -> None:
    assert canonical_json(value) == text


def test_a_numpy_value_and_the_python_value_it_holds_are_one_call() -> None:
    def key(value: Any) -> int | None:
        call = CallKey.of("fit", {"data": value})
        return None if call is None else call.key

    assert key(np.array([1, 2, 3])) == key([1, 2, 3])
    assert key(np.float64(0.5)) == key(0.5)
    assert key(np.array([1, 2, 3])) != key(np.array([1, 2, 4]))
    assert key(np.array([[1, 2], [3, 4]])) != key(np.array([1, 2, 3, 4]))  # the shape is part of it


def test_a_result_holding_numpy_values_is_digested(make_guard: GuardFactory) -> None:
    guard = make_guard()
    answer = {"loss": np.float64(0.693), "weights": np.zeros(4)}
    assert [run(guard, "train", {"epochs": 1}, answer) for _ in range(7)] == [True] * 5 + [False, False]
    assert guard.stats()["fail_open"] == {}
