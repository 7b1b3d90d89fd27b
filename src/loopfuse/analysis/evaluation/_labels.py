"""A corpus's ``labels.json``, read and checked, and the file of each labeled run.

The labels are a JSON object mapping each run's name (its file's name in the corpus
folder, without the extension) to ``{"label": "loop" or "healthy", "loop_start": step}``;
``loop_start`` is required for a loop and null or absent for a healthy run, and an
optional ``confidence`` is a string. Other keys (notes, statistics) are left alone.
Anything else is a ValueError that names the file, the run, the key, the value and what
is allowed: nothing is scored as something it was not labeled.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

__all__ = ["LABELS", "read_labels", "run_files"]

LABELS = ("loop", "healthy")
_SHAPE = '{"run name": {"label": "loop" or "healthy", "loop_start": step}, ...}'
_LISTED = 10
_ABSENT = object()


def read_labels(path: str | Path) -> dict[str, dict[str, Any]]:
    """Each labeled run's name and entry, checked (OSError when the file cannot be read)."""
    labels = _load(Path(path))
    if not isinstance(labels, dict):
        raise ValueError(f"{path}: the labels must be a JSON object {_SHAPE}, not {_kind(labels)}")
    for name, entry in labels.items():
        _check(path, name, entry)
    return labels


def run_files(folder: Path, labels_path: str | Path, names: Iterable[str]) -> dict[str, Path]:
    """Each run's file in ``folder``: named as the run, then an extension (the first, sorted).
    A name taken literally, never as a pattern; a ValueError names the runs without a file."""
    files = _by_run_name(folder)
    found = {name: files.get(name) for name in names}
    missing = sorted(name for name, file in found.items() if file is None)
    if missing:
        shown = ", ".join(missing[:_LISTED]) + (", ..." if len(missing) > _LISTED else "")
        raise ValueError(
            f"{labels_path}: {len(missing)} labeled run(s) have no file in {folder} "
            f"(a run's file is named as the run, then an extension): {shown}"
        )
    return {name: file for name, file in found.items() if file is not None}


def _by_run_name(folder: Path) -> dict[str, Path]:
    """Each name a file of ``folder`` can be the run of (its name up to any dot): the first file, sorted."""
    files: dict[str, Path] = {}
    for path in sorted(p for p in folder.iterdir() if p.is_file()):
        for at, char in enumerate(path.name):
            if char == ".":
                files.setdefault(path.name[:at], path)
    return files


def _load(path: Path) -> Any:
    try:
        return json.loads(path.read_bytes(), object_pairs_hook=_unique_keys)
    except _DuplicateKey as exc:
        raise ValueError(f"{path}: {exc}") from None
    except ValueError as exc:  # not JSON, or not UTF-8/16/32
        raise ValueError(f"{path} is not valid JSON: {exc}") from None
    except RecursionError:
        raise ValueError(f"{path} is not valid JSON: nested too deeply") from None


class _DuplicateKey(ValueError):
    pass


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for key, value in pairs:
        if key in found:
            raise _DuplicateKey(f"the key {_shown(key)} is given twice in one object")
        found[key] = value
    return found


def _check(path: str | Path, name: str, entry: Any) -> None:
    where = f"{path}: run {_shown(name)}"
    if not name or name in (".", "..") or "/" in name or "\\" in name or "\0" in name:
        raise ValueError(
            f"{where}: a run's name is its file's name in the corpus folder, without the extension "
            "(not empty, '.' or '..', and without '/' or a backslash)"
        )
    if not isinstance(entry, dict):
        raise ValueError(
            f'{where}: expected an object as {{"label": "loop", "loop_start": 8}}, not {_kind(entry)}'
        )
    label = entry.get("label", _ABSENT)
    if label not in LABELS:
        raise ValueError(f'{where}: "label" is {_shown(label)}; allowed: "loop" or "healthy"')
    _check_start(where, label, entry.get("loop_start", _ABSENT))
    confidence = entry.get("confidence")
    if confidence is not None and not (isinstance(confidence, str) and confidence):
        raise ValueError(
            f'{where}: "confidence" is {_shown(confidence)}; allowed: a word (as "high") or null'
        )


def _check_start(where: str, label: str, start: Any) -> None:
    if label == "healthy" and start not in (None, _ABSENT):
        raise ValueError(f'{where}: "loop_start" is {_shown(start)}; a healthy run has none (null or absent)')
    if label == "loop" and (isinstance(start, bool) or not isinstance(start, int) or start < 0):
        raise ValueError(
            f'{where}: "loop_start" is {_shown(start)}; allowed: the step where the loop starts, '
            'an integer >= 0 (required for a "loop")'
        )


def _shown(value: Any) -> str:
    text = "absent" if value is _ABSENT else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 80 else text[:77] + "..."


def _kind(value: Any) -> str:
    kinds = {list: "a list", str: "a string", bool: "true or false", type(None): "null"}
    return kinds.get(type(value), "a number")
