"""What canonical JSON writes for the Python values JSON has no type for.

Tools called from Python (``guard.wrap``, a host's own ``check``) take dates, paths, bytes,
sets and dataclasses as often as strings; a call holding one was allowed unjudged, so a loop
over such a tool was never stopped. Each is written as one JSON value, by the value's own
class's method, never an override of a subclass (the caller's code does not run):

- ``Enum`` member: its ``value``; ``UUID``: its canonical string (as orjson writes both);
- ``datetime``, ``date``, ``time``: ISO 8601 (``isoformat``); ``timedelta``: ``str``;
- ``Decimal``: its string; a path (``PurePath``): its string; ``bytes``, ``bytearray``: hex;
- ``set``, ``frozenset``: a list of its items, sorted by their canonical JSON (insertion
  order never matters);
- a dataclass instance: an object of the fields that take part in its comparisons;
- a pydantic model (when pydantic is loaded): what ``BaseModel.model_dump(mode="json")`` gives;
- a numpy array or scalar (when numpy is loaded): the Python value it holds (``tolist``, ``item``),
  so ``np.int64(7)`` and ``7`` are one argument, and an array a nested list (its shape kept);
  an array of more than 1,024 numbers: an object of its type, shape and data's SHA-256;
- any other ``Mapping``: an object of its items.

Anything else raises ``TypeError``: the call cannot be judged and is allowed (fail open).
"""

from __future__ import annotations

import dataclasses
import datetime
import decimal
import enum
import hashlib
import pathlib
import sys
import uuid
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["json_default"]

_AS_TEXT: tuple[tuple[type[Any], Callable[[Any], str]], ...] = (
    (datetime.datetime, datetime.datetime.isoformat),  # before date: a datetime is a date
    (datetime.date, datetime.date.isoformat),
    (datetime.time, datetime.time.isoformat),
    (datetime.timedelta, datetime.timedelta.__str__),
    (decimal.Decimal, decimal.Decimal.__str__),
    (pathlib.PurePath, pathlib.PurePath.__str__),
    (bytes, bytes.hex),
    (bytearray, bytearray.hex),
)


def json_default(value: Any, encode: Callable[[Any], str]) -> Any:
    """``value`` as JSON data (``encode``: canonical JSON, to order a set's items)."""
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, uuid.UUID):  # a subclass too (orjson leaves those to this path)
        return uuid.UUID.__str__(value)
    for kind, text in _AS_TEXT:
        if isinstance(value, kind):
            return text(value)
    if isinstance(value, set | frozenset):
        return sorted(value, key=encode)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: getattr(value, f.name) for f in dataclasses.fields(value) if f.compare}
    pydantic = sys.modules.get("pydantic")  # never imported here: a model exists only once it is
    if pydantic is not None and isinstance(value, pydantic.BaseModel):
        return pydantic.BaseModel.model_dump(value, mode="json")
    numpy = sys.modules.get("numpy")  # the same: never imported here
    if numpy is not None and isinstance(value, numpy.ndarray | numpy.generic):
        return _numpy_value(numpy, value)
    if isinstance(value, Mapping):
        return dict(value.items())
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


_ARRAY_ITEMS = 1024  # an array with more items is written as a digest of its data


def _numpy_value(numpy: Any, value: Any) -> Any:
    """A numpy array as nested lists, a scalar as its Python value (numpy's methods, not a
    subclass's). An array of more than ``_ARRAY_ITEMS`` numbers is its type, shape and the
    SHA-256 of its data instead: as Python values it would take some 30 times its memory."""
    if not isinstance(value, numpy.ndarray):
        return numpy.generic.item(value)
    array = numpy.ndarray.view(value, numpy.ndarray)
    if array.size <= _ARRAY_ITEMS or array.dtype.hasobject:
        return array.tolist()
    data = numpy.ascontiguousarray(array).data  # a copy only for a slice with gaps
    return {"dtype": str(array.dtype), "sha256": hashlib.sha256(data).hexdigest(), "shape": list(array.shape)}
