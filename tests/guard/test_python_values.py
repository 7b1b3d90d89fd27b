"""Arguments and results that are Python values JSON has no type for (numpy's too): judged, not
failed open."""

from __future__ import annotations

import dataclasses
import datetime
import decimal
import pathlib
from collections import OrderedDict
from types import MappingProxyType
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loopfuse._calls import CallKey, canonical_json
from tests.store_fixtures import GuardFactory

from .conftest import run


@dataclasses.dataclass
class Query:
    text: str
    since: datetime.date
    trace: str = dataclasses.field(default="", compare=False)


class LoudDate(datetime.date):
    def isoformat(self) -> str:
        raise AssertionError("the caller's override ran")


class LoudArray(np.ndarray):
    def tolist(self) -> Any:
        raise AssertionError("the caller's override ran")


VALUES = {
    "datetime": datetime.datetime(2024, 12, 3, 7, 50, 45),
    "date": datetime.date(2024, 12, 3),
    "time": datetime.time(7, 50),
    "timedelta": datetime.timedelta(minutes=5),
    "Decimal": decimal.Decimal("1.50"),
    "path": pathlib.Path("/repo/src/mod.py"),
    "bytes": b"\x00\xffab",
    "bytearray": bytearray(b"ab"),
    "set": {"b", "a", 3},
    "frozenset": frozenset({1, 2}),
    "dataclass": Query("pricing", datetime.date(2024, 12, 3)),
    "mapping proxy": MappingProxyType({"a": 1}),
    "date subclass": LoudDate(2024, 12, 3),
    "numpy array": np.array([[1.5, 2.0], [3.0, 4.25]]),
    "numpy int64": np.int64(7),
    "numpy bool_": np.bool_(True),
    "numpy array subclass": np.arange(3).view(LoudArray),
}


@pytest.mark.parametrize("value", VALUES.values(), ids=list(VALUES))
def test_a_call_holding_a_python_value_is_judged_as_any_call(make_guard: GuardFactory, value: Any) -> None:
    guard = make_guard()
    args = {"x": value, "nested": [value]}
    assert [guard.check("tool", args, "a").allowed for _ in range(8)] == [True] * 6 + [False, False]
    assert guard.stats()["fail_open"] == {}


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (VALUES["datetime"], '"2024-12-03T07:50:45"'),
        (VALUES["timedelta"], '"0:05:00"'),
        (VALUES["Decimal"], '"1.50"'),
        (VALUES["path"], '"/repo/src/mod.py"'),
        (VALUES["bytes"], '"00ff6162"'),
        (VALUES["set"], '["a","b",3]'),  # by each item's canonical JSON
        (VALUES["dataclass"], '{"since":"2024-12-03","text":"pricing"}'),
        (VALUES["date subclass"], '"2024-12-03"'),
        (OrderedDict([("b", 1), ("a", {2})]), '{"a":[2],"b":1}'),
        (VALUES["numpy array"], "[[1.5,2.0],[3.0,4.25]]"),  # nested lists: the shape is kept
        (VALUES["numpy int64"], "7"),
        (VALUES["numpy bool_"], "true"),
        (VALUES["numpy array subclass"], "[0,1,2]"),
        (np.array(["b", "a"]), '["b","a"]'),  # an array keeps its order: it is not a set
    ],
)
def test_each_value_is_written_as_one_json_value(value: Any, text: str) -> None:
    assert canonical_json(value) == text


def test_values_equal_for_the_tool_are_one_call_and_others_are_not() -> None:
    def key(value: Any) -> int | None:
        call = CallKey.of("search", {"q": value})
        return None if call is None else call.key

    assert key(Query("pricing", datetime.date(2024, 12, 3), trace="t-1")) == key(
        Query("pricing", datetime.date(2024, 12, 3), trace="t-2")
    )  # a field left out of comparisons is left out of the call
    assert key(Query("pricing", datetime.date(2024, 12, 4))) != key(VALUES["dataclass"])
    assert key(frozenset({1, 2})) == key({2, 1})
    assert key(datetime.date(2024, 12, 3)) != key(datetime.date(2024, 12, 4))
    assert key(b"a") != key(b"b")
    assert key(np.array([1, 2, 3])) == key([1, 2, 3])  # numpy values are the Python values they hold
    assert key(np.float64(0.5)) == key(0.5)
    assert key(np.array([[1, 2], [3, 4]])) != key(np.array([1, 2, 3, 4]))


def test_a_large_numpy_array_is_one_value_by_its_data() -> None:
    """Past 1,024 items an array is its type, shape and data's digest (as Python values it
    would take some 30 times its memory); a slice with gaps reads as its copy."""
    data = np.arange(1_000_000, dtype=np.float64).reshape(1000, 1000)
    changed = data.copy()
    changed[500, 500] += 1

    def key(value: Any) -> int | None:
        call = CallKey.of("fit", {"x": value})
        return None if call is None else call.key

    assert key(data) == key(data.copy()) == key(data.view(LoudArray))
    assert key(data) not in (key(changed), key(data.reshape(500, 2000)), key(data.astype(np.float32)))
    assert key(data[:, ::2]) == key(np.ascontiguousarray(data[:, ::2]))
    assert canonical_json(np.zeros(1025, dtype=np.int8)).startswith('{"dtype":"int8","sha256":"')
    assert canonical_json(np.zeros(1024, dtype=np.int8)) == "[" + ",".join(["0"] * 1024) + "]"


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.one_of(st.integers(), st.text(max_size=5), st.dates()), unique=True, max_size=8), st.randoms()
)
def test_the_order_a_set_was_filled_in_never_matters(items: list[Any], random: Any) -> None:
    shuffled = list(items)
    random.shuffle(shuffled)
    assert canonical_json({"s": set(items)}) == canonical_json({"s": set(shuffled)})


def test_a_result_holding_python_values_is_digested(make_guard: GuardFactory) -> None:
    guard = make_guard()
    answer = {
        "status": "pending",
        "checked": VALUES["datetime"],
        "files": {"a.py", "b.py"},
        "load": np.zeros(2),
    }
    assert [run(guard, "job_status", {"job": 7}, answer) for _ in range(7)] == [True] * 5 + [False, False]
    assert guard.stats()["fail_open"] == {}


def test_a_pydantic_model_is_judged_by_its_fields_not_its_own_methods(make_guard: GuardFactory) -> None:
    pydantic = pytest.importorskip("pydantic")

    class Search(pydantic.BaseModel):  # type: ignore[misc, name-defined]
        text: str
        since: datetime.date

        def model_dump(self, **options: Any) -> dict[str, Any]:
            raise AssertionError("the caller's override ran")

    query = Search(text="pricing", since=datetime.date(2024, 12, 3))
    assert canonical_json({"q": query}) == '{"q":{"since":"2024-12-03","text":"pricing"}}'
    guard = make_guard()
    assert [guard.check("search", {"q": query}, "a").allowed for _ in range(7)] == [True] * 6 + [False]
    assert run(guard, "lookup", {"n": 1}, Search(text="a", since=datetime.date(2024, 1, 2)))
    assert guard.stats()["fail_open"] == {}


def test_a_bytes_result_is_read_as_the_text_it_encodes(make_guard: GuardFactory) -> None:
    guard = make_guard()  # a process's output, captured without text=True: its failure is read
    answers = [
        run(guard, "sh", {"cmd": f"deploy {chr(97 + i)}"}, b"Error: permission denied\n") for i in range(12)
    ]
    assert answers == [True] * 10 + [False, False]
    assert guard.check("sh", {"cmd": "deploy z"}, "a").rule == "same_error.limit"
