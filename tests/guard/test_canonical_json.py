"""The optional orjson path gives every call the key the pure-Python path gives it."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from loopfuse._calls import CallKey, _encoder, _fast_encoder

from .canonical_samples import SAMPLES

pytest.importorskip("orjson")

PURE = _encoder()
FAST = _fast_encoder()
LEAVES = st.none() | st.booleans() | st.integers() | st.floats() | st.text()
VALUES = st.recursive(
    LEAVES, lambda inner: st.lists(inner) | st.dictionaries(st.text(), inner), max_leaves=25
)


@settings(max_examples=500, deadline=None)
@given(VALUES)
@example(1e-07)  # orjson writes 1e-7
@example({"tiny": -2.5e-05, "n": 3})  # orjson writes -0.000025
@example([float("nan"), float("inf")])  # orjson writes null
@example({"big": 1e22, "small": 1e-300})
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
    assert pure[1:] == fast[1:] == [getattr(CallKey.of("t", s), "key", None) for s in SAMPLES]
