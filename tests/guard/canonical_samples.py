"""Arguments whose canonical JSON is hard to get right: None, NaN, exponents, big and
non-string keys, control and non-ASCII characters, UUIDs and enum members (as their value)."""

from __future__ import annotations

import datetime
import enum
import pathlib
import uuid
from typing import Any


class Color(enum.Enum):
    RED = 1
    BLUE = "blue"


class Nested(enum.Enum):
    INNER = Color.BLUE  # an enum's value that is an enum: written as the inner value


class Odd(enum.Enum):
    PAIR = (1, "a", None)
    TINY = 1e-07  # orjson writes 1e-7
    HALF = 0.5
    NAN = float("nan")
    TEXT = "s\u2028é\x1f"
    MAPPING = {"b": 1, "a": [Color.RED]}  # noqa: RUF012 - a member, not a class attribute


class Level(enum.IntEnum):
    HIGH = 3


class Mode(enum.StrEnum):
    FAST = "fast"


class Perm(enum.IntFlag):
    R = 4
    W = 2


class Ratio(float, enum.Enum):
    THIRD = 1 / 3


class MyUUID(uuid.UUID):
    """orjson refuses a UUID subclass: the pure path writes its canonical string."""

    def __str__(self) -> str:
        return "not the canonical text"


MEMBERS: list[Any] = [
    *Color, *Nested, *Odd, *Level, *Mode, Perm.R, Perm.R | Perm.W, *Ratio
]  # fmt: skip
UUIDS: list[Any] = [uuid.UUID(int=1), uuid.UUID("550e8400-e29b-41d4-a716-446655440000"), MyUUID(int=2)]

SAMPLES: list[Any] = [
    {"query": "search number 7", "limit": 10, "opts": {"b": 1, "a": 2}},
    {"path": "src/é/日本.py", "line": None, "ratio": 1e-05, "big": 2**70, "nan": float("nan")},
    {"z": [1.5, -0.0, 1e16, 0.00001, True], "a": {"\u2028": "\x1f\x7f"}, 3: "int key"},
    ["tuple", ("a", 1)],
    {
        "when": datetime.datetime(2024, 12, 3, 7, 50),
        "path": pathlib.Path("/a"),
        "raw": b"ab",
        "tags": {"b", "a"},
    },
    {"id": UUIDS[1], "color": Color.RED, "members": MEMBERS, "uuids": UUIDS},
    [
        Color.RED,
        Level.HIGH,
        Mode.FAST,
        Nested.INNER,
        Odd.MAPPING,
        Odd.HALF,
        Perm.R | Perm.W,
        Ratio.THIRD,
        UUIDS[0],
    ],
]
