"""Objects that misbehave in every way a caller's object can: each raises ``error``."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any


class HostileError(Exception):
    """An exception type no library code knows about."""


ERRORS: tuple[type[Exception], ...] = (
    RuntimeError,
    HostileError,
    KeyError,
    AttributeError,
    TypeError,
    ValueError,
    LookupError,
    ZeroDivisionError,
    MemoryError,
)


def raiser(error: type[Exception]) -> Any:
    def method(*_: Any, **__: Any) -> Any:
        raise error("hostile s3cret")

    return method


def bad_key(error: type[Exception], text: str = "k") -> Any:
    """A str subclass key whose comparisons raise (sorting, lookups)."""
    cls = type("BadKey", (str,), {"__eq__": raiser(error), "__lt__": raiser(error), "__gt__": raiser(error)})
    cls.__hash__ = str.__hash__  # type: ignore[assignment]
    return cls(text)


class KeyWithRaisingCompare:
    """A non-string dict key whose ``__eq__``/``__lt__`` raise (hashes differ by ``n``)."""

    def __init__(self, n: int, error: type[Exception]) -> None:
        self.n, self.error = n, error

    def __hash__(self) -> int:
        return self.n

    def __eq__(self, other: object) -> bool:
        raise self.error("hostile")

    def __lt__(self, other: object) -> bool:
        raise self.error("hostile")


def items_raising_dict(error: type[Exception]) -> dict[str, Any]:
    cls = type(
        "ItemsRaising", (dict,), {"items": raiser(error), "keys": raiser(error), "__iter__": raiser(error)}
    )
    return cls(a=1, b=2)  # type: ignore[no-any-return]


class RaisingMapping(Mapping[str, Any]):
    def __init__(self, error: type[Exception]) -> None:
        self.error = error

    def __getitem__(self, key: str) -> Any:
        raise self.error("hostile")

    def __iter__(self) -> Iterator[str]:
        raise self.error("hostile")

    def __len__(self) -> int:
        raise self.error("hostile")


def class_raising(error: type[Exception]) -> Any:
    """An object whose ``__class__`` raises (so ``isinstance`` against it raises)."""
    cls = type("ClassRaising", (), {"__class__": property(raiser(error))})
    return cls()


def getattr_raising(error: type[Exception]) -> Any:
    cls = type("GetattrRaising", (), {"__getattr__": raiser(error)})
    return cls()


def getattribute_raising(error: type[Exception]) -> Any:
    cls = type("GetattributeRaising", (), {"__getattribute__": raiser(error)})
    return cls()


def slots_hash_raising(error: type[Exception]) -> Any:
    """No ``__weakref__`` and a raising ``__hash__``: can be keyed neither way."""
    cls = type("SlotsHashRaising", (), {"__slots__": (), "__hash__": raiser(error), "__eq__": raiser(error)})
    return cls()


def id_property_raising(error: type[Exception]) -> Any:
    cls = type("IdRaising", (), {"id": property(raiser(error)), "name": "fallback-name"})
    return cls()


def str_with_raising_methods(error: type[Exception], text: str = "read") -> Any:
    names = (
        "__hash__",
        "__eq__",
        "__ne__",
        "__add__",
        "__str__",
        "__repr__",
        "__format__",
        "encode",
        "__len__",
    )
    cls = type("HostileStr", (str,), {name: raiser(error) for name in names})
    return cls(text)


def exception_with_raising_str(error: type[Exception]) -> BaseException:
    cls = type("BadException", (Exception,), {"__str__": raiser(error), "__repr__": raiser(error)})
    exception: BaseException = cls("x")
    return exception


def deep_list(depth: int) -> Any:
    value: Any = []
    for _ in range(depth):
        value = [value]
    return value


def circular() -> Any:
    a: list[Any] = []
    a.append(a)
    return a


def values(error: type[Exception]) -> list[Any]:
    """Every hostile value built with ``error``: as arguments, results or agents."""
    return [
        {bad_key(error, "a"): 1, bad_key(error, "b"): 2},
        {KeyWithRaisingCompare(1, error): 1, KeyWithRaisingCompare(2, error): 2},
        {"x": {KeyWithRaisingCompare(1, error): 1, KeyWithRaisingCompare(2, error): 2}},
        items_raising_dict(error),
        RaisingMapping(error),
        class_raising(error),
        getattr_raising(error),
        getattribute_raising(error),
        slots_hash_raising(error),
        id_property_raising(error),
        str_with_raising_methods(error),
        exception_with_raising_str(error),
        [str_with_raising_methods(error, "v")],
        {"k": str_with_raising_methods(error, "v")},
        deep_list(5_000),
        circular(),
        {"big": 10**5000},
        ["a"],
        {"a"},
        b"bytes",
        object(),
        None,
        "\ud800 lone surrogate",
        float("nan"),
    ]
