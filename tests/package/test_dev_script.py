"""``dev.py`` checks with the Python that runs it: a ``.venv`` another version made is made again."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]


def dev_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("dev_script", ROOT / "dev.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


THIS = "{}.{}".format(*sys.version_info[:2])


@pytest.mark.parametrize(
    ("config", "ours"),
    [
        (f"home = /usr/bin\nversion = {THIS}.7\n", True),  # the standard library's venv
        (f"home = /usr/bin\nversion_info = {THIS}.2\n", True),  # uv, virtualenv
        ("home = /usr/bin\nversion = 3.9.18\n", False),
        (f"home = /usr/bin\nversion = {THIS}1.0\n", False),  # 3.1 is not 3.11, 3.11 not 3.111
        ("home = /usr/bin\n", False),
    ],
)
def test_a_venv_counts_as_this_pythons_by_its_major_and_minor_version(
    tmp_path: Path, config: str, ours: bool
) -> None:
    (tmp_path / "pyvenv.cfg").write_text(config)
    assert dev_script().made_by_this_python(tmp_path) is ours


def test_a_folder_without_pyvenv_cfg_is_no_venv_of_this_python(tmp_path: Path) -> None:
    assert dev_script().made_by_this_python(tmp_path) is False


def test_the_venv_running_the_tests_was_made_by_their_python() -> None:
    if sys.prefix == sys.base_prefix:
        pytest.skip("not run from a venv")
    assert dev_script().made_by_this_python(Path(sys.prefix)) is True
