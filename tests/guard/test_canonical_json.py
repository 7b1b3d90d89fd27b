"""The optional orjson path gives every call the key the pure-Python path gives it, UUIDs and
enum members included (orjson writes them natively; the standard library's path as orjson does)."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from loopfuse._calls import CallKey, _encoder, _fast_encoder

from .canonical_samples import MEMBERS, SAMPLES, UUIDS, Color, Nested, Odd

orjson = pytest.importorskip("orjson")

PURE = _encoder()
FAST = _fast_encoder()
LEAVES = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.text()
    | st.uuids()
    | st.sampled_from([*MEMBERS, *UUIDS])
)
VALUES = st.recursive(
    LEAVES, lambda inner: st.lists(inner) | st.dictionaries(st.text(), inner), max_leaves=25
)


@settings(max_examples=500, deadline=None)
@given(VALUES)
@example(1e-07)  # orjson writes 1e-7
@example({"tiny": -2.5e-05, "n": 3})  # orjson writes -0.000025
@example([float("nan"), float("inf")])  # orjson writes null
@example({"big": 1e22, "small": 1e-300})
@example({"id": UUIDS[0], "color": Color.RED, "nested": Nested.INNER})
def test_orjson_writes_what_the_standard_library_writes_or_steps_aside(value: Any) -> None:
    assert FAST is not None
    fast = FAST(value)
    assert fast is None or fast.decode() == PURE(value)


def test_keys_are_the_same_with_and_without_orjson() -> None:
    script = (
        "import sys, json\n"
        "if sys.argv[1] == 'pure': sys.modules['orjson'] = None\n"
        "from loopfuse._calls import CallKey, _FAST\n"
        "from tests.guard.canonical_samples import SAMPLES\n"
        "print(json.dumps([_FAST is not None] + [getattr(CallKey.of('t', s), 'key', None) for s in SAMPLES]))\n"
    )
    runs = [
        subprocess.run([sys.executable, "-c", script, mode], capture_output=True, text=True)
        for mode in ("pure", "fast")
    ]
    pure, fast = (json.loads(run.stdout) for run in runs)
    assert pure[0] is False and fast[0] is True
    assert None not in pure[-2:]  # UUIDs and enum members are judged, not failed open
    assert pure[1:] == fast[1:] == [getattr(CallKey.of("t", s), "key", None) for s in SAMPLES]


@pytest.mark.parametrize(
    "value", [*MEMBERS, *UUIDS[:2], {"id": UUIDS[0], "tags": [Color.BLUE, Nested.INNER]}]
)
def test_the_standard_library_path_writes_uuids_and_enum_members_as_orjson_does(value: Any) -> None:
    if any(value is odd for odd in (Odd.TINY, Odd.NAN, Odd.PAIR)):  # orjson writes 1e-7, null: pure decides
        assert FAST is not None and FAST(value) is None
        return
    assert PURE(value) == orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()


def test_an_enum_member_is_the_same_call_as_its_value_and_a_uuid_as_its_text() -> None:
    assert PURE({"q": Color.RED, "id": UUIDS[0]}) == '{"id":"00000000-0000-0000-0000-000000000001","q":1}'
    assert PURE(UUIDS[2]) == '"00000000-0000-0000-0000-000000000002"'  # a subclass: its canonical text
    assert PURE([Odd.TINY, Odd.PAIR]) == '[1e-07,[1,"a",null]]'
