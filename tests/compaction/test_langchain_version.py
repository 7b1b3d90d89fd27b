"""The installed LangChain must be inside the range the ``langchain`` extra declares.

GuardedSummarizationMiddleware relies on SummarizationMiddleware internals, so that range
is the tested one; this test fails when the installed version leaves it.
"""

from __future__ import annotations

import tomllib
from importlib.metadata import version
from pathlib import Path

from packaging.requirements import Requirement

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"


def declared(package: str) -> Requirement:
    extra = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["project"]["optional-dependencies"][
        "langchain"
    ]
    return next(req for req in map(Requirement, extra) if req.name == package)


def test_installed_langchain_is_inside_the_declared_range() -> None:
    requirement = declared("langchain")
    installed = version("langchain")
    assert str(requirement.specifier), "the langchain extra must declare a version range"
    assert requirement.specifier.contains(installed), (
        f"langchain {installed} is outside the range {requirement.specifier} of the langchain extra"
    )
