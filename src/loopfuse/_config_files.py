"""Reading configuration files: TOML (``[tool.loopfuse]`` in pyproject.toml), JSON, YAML.

Every error is a ``ConfigError`` naming the file. A key written twice in one table is an error
in all three (TOML's own rule; JSON and YAML would keep the last silently).
"""

from __future__ import annotations

import json
import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .errors import ConfigError

__all__ = ["config_path", "has_loopfuse_table", "load_config_file"]


def config_path(path: Any) -> Path:
    """``path`` as a ``Path``; a ``ConfigError`` for what is not a file's path (None, bytes, "")."""
    text = os.fspath(path) if isinstance(path, str | os.PathLike) else None
    if not isinstance(text, str):
        raise ConfigError(
            f"configuration file = {type(path).__name__} is not allowed: expected a file's path (a str or a Path)"
        )
    if not text.strip():  # Path("") is the current folder
        raise ConfigError(f"configuration file {text!r} is not allowed: expected a file's path")
    return Path(text)


def load_config_file(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The mapping in a TOML file (``[tool.loopfuse]`` for pyproject.toml, which must have it),
    a JSON file or a YAML file, chosen by the file's suffix."""
    p = config_path(path)
    text = _read(p)
    suffix = p.suffix.lower()
    if suffix in (".yaml", ".yml"):
        return _load_yaml(text, p)
    if suffix == ".json":
        return _load_json(text, p)
    data = _load_toml(text, p)
    if p.name == "pyproject.toml":
        table = _pyproject_table(data, p)
        if table is None:
            raise ConfigError(f"configuration file {str(p)!r} has no [tool.loopfuse] table")
        return table  # type: ignore[no-any-return]
    return data


def has_loopfuse_table(pyproject: Path) -> bool:
    """Whether a pyproject.toml has a ``[tool.loopfuse]`` table (found, not named, it may not)."""
    return _pyproject_table(_load_toml(_read(pyproject), pyproject), pyproject) is not None


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) else "it is not UTF-8 text"
        raise ConfigError(f"configuration file {str(path)!r} cannot be read: {reason}") from exc


def _load_toml(text: str, path: Path) -> dict[str, Any]:
    text = text.removeprefix("\ufeff")  # a byte order mark, as some editors save
    try:
        return tomllib.loads(text)
    except ValueError as exc:  # TOMLDecodeError, or an integer of over 4,300 digits
        raise ConfigError(f"configuration file {str(path)!r} is not valid TOML: {exc}") from exc


def _pyproject_table(data: dict[str, Any], path: Path) -> Any:
    tool = data.get("tool", {})
    if not isinstance(tool, Mapping):
        raise ConfigError(f"configuration file {str(path)!r}: [tool] is not a table")
    return tool.get("loopfuse")


def _load_json(text: str, path: Path) -> dict[str, Any]:
    try:
        data = json.loads(text, object_pairs_hook=_unique_keys)
    except ValueError as exc:
        raise ConfigError(f"configuration file {str(path)!r} is not valid JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"configuration file {str(path)!r}: expected a JSON object of sections")
    return data


def _unique_keys(pairs: list[tuple[Any, Any]]) -> dict[Any, Any]:
    table = dict(pairs)
    if len(table) < len(pairs):
        raise ValueError(f"the key {_written_twice([k for k, _ in pairs])!r} is written twice in one table")
    return table


def _written_twice(keys: list[Any]) -> Any:
    """The first key of ``keys`` that an earlier one equals; None if none does."""
    return next((k for i, k in enumerate(keys) if k in keys[:i]), None)


def _load_yaml(text: str, path: Path) -> dict[str, Any]:
    try:
        import yaml
    except ImportError as exc:
        raise ConfigError(
            f"configuration file {str(path)!r} is YAML, which needs PyYAML: pip install 'loopfuse[yaml]'"
        ) from exc
    try:
        data = yaml.load(text, Loader=_unique_key_loader(yaml))
    except (yaml.YAMLError, ValueError) as exc:  # ValueError: an integer of over 4,300 digits
        raise ConfigError(f"configuration file {str(path)!r} is not valid YAML: {exc}") from exc
    return data if data is not None else {}


def _unique_key_loader(yaml: Any) -> Any:
    """PyYAML's ``SafeLoader``, refusing a key written twice in one mapping."""

    class UniqueKeyLoader(yaml.SafeLoader):  # type: ignore[misc]
        def construct_mapping(self, node: Any, deep: bool = False) -> Any:
            own = [(k.tag, k.value) for k, _ in node.value if k.tag != "tag:yaml.org,2002:merge"]
            twice = _written_twice([key for key in own if isinstance(key[1], str)])
            if twice is not None:  # (a merged key the mapping sets again is no error)
                raise ValueError(f"the key {twice[1]!r} is written twice in one mapping")
            return super().construct_mapping(node, deep=deep)

    return UniqueKeyLoader
