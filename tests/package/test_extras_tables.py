"""The extras tables a newcomer installs from list exactly the extras the package declares."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXTRAS = set(
    tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
)


def table_extras(page: Path) -> set[str]:
    """The extras named in the first column of the page's ``| extra | for |`` table."""
    lines = page.read_text(encoding="utf-8").splitlines()
    rows: list[str] = []
    for line in lines[lines.index("| extra | for |") + 2 :]:
        if not line.startswith("|"):
            break
        rows.append(line)
    names = (re.match(r"\| `([a-z-]+)` \|", row) for row in rows)
    return {found.group(1) for found in names if found}


@pytest.mark.parametrize("page", ["README.md", "docs/quickstart.md"])
def test_the_extras_table_names_every_declared_extra_but_dev(page: str) -> None:
    assert table_extras(ROOT / page) == EXTRAS - {"dev"}
