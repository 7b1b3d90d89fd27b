"""The wheel and the sdist build from a clone and install into a clean environment."""

from __future__ import annotations

import subprocess
import sys
import tarfile
import venv
import zipfile
from pathlib import Path

import pytest

import loopfuse

pytestmark = pytest.mark.slow  # builds a wheel and an sdist and installs into a fresh environment

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    build = [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(ROOT)]
    subprocess.run(build, check=True, capture_output=True)
    return out


def test_the_wheel_holds_the_package_and_its_type_marker(dist: Path) -> None:
    (wheel,) = dist.glob("loopfuse-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
    assert "loopfuse/py.typed" in names and "loopfuse/stores/lua/decide.lua" in names
    assert not any(name.startswith(("tests/", "docs/")) for name in names)


def test_the_sdist_holds_the_sources_and_the_readme(dist: Path) -> None:
    (sdist,) = dist.glob("loopfuse-*.tar.gz")
    with tarfile.open(sdist) as archive:
        names = archive.getnames()
    assert any(name.endswith("src/loopfuse/guard.py") for name in names)
    assert any(name.endswith("/README.md") for name in names)


def test_the_wheel_installs_cleanly_and_runs(dist: Path, tmp_path: Path) -> None:
    (wheel,) = dist.glob("loopfuse-*.whl")
    venv.create(tmp_path / "env", with_pip=True)
    bin_dir = tmp_path / "env" / "bin"
    subprocess.run([bin_dir / "pip", "install", "-q", "--no-deps", str(wheel)], check=True)
    version = subprocess.run([bin_dir / "loopfuse", "--version"], capture_output=True, text=True, check=True)
    assert loopfuse.__version__ in version.stdout
    code = "from loopfuse import Guard; print(Guard().check('search', {'q': 'x'}).allowed)"
    shown = subprocess.run([bin_dir / "python", "-c", code], capture_output=True, text=True, check=True)
    assert shown.stdout == "True\n"
