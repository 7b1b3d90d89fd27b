from __future__ import annotations

import ast
import importlib
import re
import subprocess
import sys
import types
from pathlib import Path

import pytest

import loopfuse

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src" / "loopfuse"
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
DOC_IMPORT = re.compile(r"^\s*from (loopfuse[\w.]*) import ([\w, ]+)$", re.MULTILINE)
DOC_REFERENCE = re.compile(
    r"`(loopfuse(?:\.[a-z_]+)*)\.([A-Z]\w*|\w+(?=\())"
)  # `loopfuse.x.Name`, `loopfuse.f(`
# Modules whose import needs an optional extra: their names cannot be exported at the top,
# because ``import loopfuse`` imports no third-party package.
NEEDS_AN_EXTRA = ("loopfuse.adapters.", "loopfuse.otel", "loopfuse.listeners.otel", "loopfuse.stores.redis")
NOT_AT_THE_TOP = (*NEEDS_AN_EXTRA, "loopfuse.testing")  # test helpers stay in their own module
# The breaker registry rework gives the breaker modules their ``__all__``.


def test_all_is_sorted_and_complete() -> None:
    assert loopfuse.__all__ == sorted(loopfuse.__all__)
    for name in loopfuse.__all__:
        assert hasattr(loopfuse, name)


def test_every_public_name_at_the_top_is_in_all() -> None:
    public = {
        name
        for name, value in vars(loopfuse).items()
        if not name.startswith("_")
        and name != "annotations"  # from __future__
        and not isinstance(value, types.ModuleType)
    }
    assert public == set(loopfuse.__all__) - {"__version__"}


def test_contract_names_are_exported() -> None:
    for name in (
        "Guard",
        "Decision",
        "LoopBrake",
        "LoopBrakeError",
        "ConfigError",
        "wrap_execute",
        "decorate_tool",
    ):
        assert name in loopfuse.__all__


def test_import_pulls_in_no_third_party_module() -> None:
    code = (
        "import sys, loopfuse\n"
        "bad = [m for m in sys.modules if m.split('.')[0] in "
        "{'yaml','redis','langchain','langgraph','agents','pydantic_ai','claude_agent_sdk','google',"
        "'smolagents','fastmcp','mcp','opentelemetry','pydantic','httpx'} or m.startswith('loopfuse.adapters.')]\n"
        "print(bad)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def _doc_imports() -> list[tuple[str, str, str]]:
    """(page, module, name) for every ``from loopfuse... import name`` line of the docs."""
    found = []
    for page in PAGES:
        for module, names in DOC_IMPORT.findall(page.read_text()):
            found += [(page.name, module, name.strip()) for name in names.split(",")]
    return found


def test_the_docs_import_lines_are_read() -> None:
    pages = {page for page, _, _ in _doc_imports()}
    assert "README.md" in pages and "quickstart.md" in pages
    lines = [line for page in PAGES for line in page.read_text().splitlines()]
    assert not any(
        line.lstrip().startswith("from loopfuse") and line.endswith("(") for line in lines
    )  # one per line


@pytest.mark.parametrize(("page", "module", "name"), sorted(set(_doc_imports())))
def test_every_name_the_docs_import_resolves(page: str, module: str, name: str) -> None:
    assert hasattr(importlib.import_module(module), name), f"{page}: from {module} import {name}"


@pytest.mark.parametrize(
    ("page", "module", "name"), sorted({d for d in _doc_imports() if not d[1].startswith(NOT_AT_THE_TOP)})
)
def test_every_name_the_docs_import_without_an_extra_is_exported_at_the_top(
    page: str, module: str, name: str
) -> None:
    assert name in loopfuse.__all__, f"{page}: from {module} import {name}"
    assert getattr(loopfuse, name) is getattr(importlib.import_module(module), name)


def test_every_name_the_docs_refer_to_by_its_path_resolves() -> None:
    found = [(p.name, *ref) for p in PAGES for ref in DOC_REFERENCE.findall(p.read_text())]
    missing = [f for f in found if not hasattr(importlib.import_module(f[1]), f[2])]
    assert len(found) > 3 and missing == []


def _declares_all(path: Path) -> bool:
    tree = ast.parse(path.read_text())
    targets: list[ast.expr] = [n.target for n in tree.body if isinstance(n, ast.AnnAssign)]
    targets += [t for n in tree.body if isinstance(n, ast.Assign) for t in n.targets]
    return any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets)


def test_every_module_declares_all() -> None:
    modules = [p.relative_to(SRC).as_posix() for p in sorted(SRC.rglob("*.py"))]
    missing = [m for m in modules if not _declares_all(SRC / m)]
    assert len(modules) > 100 and missing == []
