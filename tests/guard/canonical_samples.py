"""Arguments whose canonical JSON is hard to get right: None, NaN, exponents, big and
non-string keys, control and non-ASCII characters."""

from __future__ import annotations

from typing import Any

SAMPLES: list[Any] = [
    {"query": "search number 7", "limit": 10, "opts": {"b": 1, "a": 2}},
    {"path": "src/é/日本.py", "line": None, "ratio": 1e-05, "big": 2**70, "nan": float("nan")},
    {"z": [1.5, -0.0, 1e16, 0.00001, True], "a": {"\u2028": "\x1f\x7f"}, 3: "int key"},
    ["tuple", ("a", 1)],
]
