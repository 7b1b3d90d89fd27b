"""Every code block of README.md and docs/*.md runs, parses or is honestly marked as not runnable.

- ```python blocks run as scripts in a fresh subprocess (a top-level ``await`` is a
  ``SyntaxError``, as when a reader saves the block to a file), cwd a temporary
  directory holding a copy of ``examples/``, with a timeout. A block followed by a ```text block
  introduced by a line that says "prints" and ends in ":" must print that text (``...`` matches
  anything).
- ```toml blocks parse; those made of loopfuse sections are accepted by ``loopfuse.parse_config``,
  and one introduced by a line ending in "with the defaults:" gives the default configuration.
- ```json blocks parse (one document, or one per line).
- ```console blocks whose commands are ``$ loopfuse ...`` run, and print what the block shows.
- Every fence names its language, so nothing is run or skipped by accident.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from loopfuse import parse_config
from tests.store_fixtures import REDIS_SERVER, RedisServer

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
TIMEOUT = 180
FOREIGN_TOML = {"mcp_servers"}  # Codex's config.toml, shown in docs/mcp.md
RUNNER = """
import sys
source = open(sys.argv[1]).read()
exec(compile(source, sys.argv[1], "exec"), {"__name__": "__main__"})
"""


@dataclass(frozen=True)
class Block:
    page: str
    line: int
    lang: str
    text: str
    prints: str | None = None
    intro: str = ""

    def __str__(self) -> str:
        return f"{self.page}:{self.line}:{self.lang}"


def _fences(path: Path) -> list[tuple[int, str, str, str]]:
    """(line, language, body, the prose line before it) of every fenced block of one page."""
    found, lines, i, prose = [], path.read_text().splitlines(), 0, ""
    while i < len(lines):
        line = lines[i]
        if line.startswith("```"):
            end = next(j for j in range(i + 1, len(lines)) if lines[j].startswith("```"))
            found.append((i + 1, line[3:].strip(), "\n".join(lines[i + 1 : end]) + "\n", prose))
            i = end + 1
            continue
        prose = line.strip() or prose
        i += 1
    return found


def _introduces_output(prose: str) -> bool:
    """Whether the line before a ```text block says it shows what the block above prints."""
    return re.search(r"\bprints\b", prose) is not None and prose.endswith(":")


def _blocks() -> list[Block]:
    blocks: list[Block] = []
    for path in PAGES:
        fences = _fences(path)
        for k, (line, lang, body, intro) in enumerate(fences):
            after = fences[k + 1] if k + 1 < len(fences) else None
            prints = after[2] if after and after[1] == "text" and _introduces_output(after[3]) else None
            page = str(path.relative_to(ROOT))
            blocks.append(Block(page, line, lang, body, prints, intro))
    return blocks


BLOCKS = _blocks()


def _of(lang: str) -> list[Block]:
    return [b for b in BLOCKS if b.lang == lang]


def _matches(expected: str, actual: str) -> bool:
    pattern = ".*".join(re.escape(part) for part in expected.strip().split("..."))
    return re.fullmatch(pattern, actual.strip(), re.DOTALL) is not None


def _workdir(tmp_path: Path) -> Path:
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    return tmp_path


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real redis-server for the blocks that read ``REDIS_URL``."""
    if REDIS_SERVER is None:
        pytest.skip("needs a redis-server binary")
    server = RedisServer(tmp_path_factory.mktemp("redis"))
    server.start()
    yield server.url
    server.stop()


def _env(**extra: str) -> dict[str, str]:
    env = dict(os.environ, **extra)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT / "src"), env.get("PYTHONPATH")]))
    for key in ("LOOPFUSE_CONFIG", "LOOPFUSE_MAX_REPEATS"):
        env.pop(key, None)
    return env


def test_the_docs_have_blocks_of_every_kind() -> None:
    langs = {b.lang for b in BLOCKS}
    assert {"python", "toml", "json", "console", "sh", "text"} <= langs
    assert len(_of("python")) >= 20


def test_every_fence_names_its_language() -> None:
    bare = [str(b) for b in BLOCKS if not b.lang]
    assert bare == []


def test_the_readme_stays_short() -> None:
    assert (ROOT / "README.md").stat().st_size <= 10 * 1024


def _marked(blocks: list[Block]) -> list[object]:
    """The blocks, those that read ``REDIS_URL`` marked ``redis`` (they get a redis-server)."""
    return [pytest.param(b, marks=pytest.mark.redis) if "REDIS_URL" in b.text else b for b in blocks]


@pytest.mark.parametrize("block", _marked(_of("python")), ids=str)
def test_python_block_runs(block: Block, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    extra = {"REDIS_URL": request.getfixturevalue("redis_url")} if "REDIS_URL" in block.text else {}
    cwd = _workdir(tmp_path)
    (cwd / "_block.py").write_text(block.text)
    done = subprocess.run(
        [sys.executable, "-c", RUNNER, "_block.py"],
        cwd=cwd,
        env=_env(**extra),
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, f"{block} failed:\n{done.stderr[-3000:]}"
    if block.prints is not None:
        assert _matches(block.prints, done.stdout), f"{block} printed:\n{done.stdout}"


@pytest.mark.parametrize("block", _of("toml"), ids=str)
def test_toml_block_parses(block: Block) -> None:
    data = tomllib.loads(block.text)
    if not set(data) & FOREIGN_TOML:
        config = parse_config(data)
        if block.intro.endswith("with the defaults:"):
            assert config == parse_config({}), f"{block} is not the defaults"
            lowered = {**data, "duplicate": {**data["duplicate"], "limit": 3}}  # copied, one limit changed
            assert parse_config(lowered) == parse_config({"duplicate": {"limit": 3}}), f"{block} fixes a key"


@pytest.mark.parametrize("block", _of("json"), ids=str)
def test_json_block_parses(block: Block) -> None:
    try:
        json.loads(block.text)
    except json.JSONDecodeError:
        for line in block.text.splitlines():
            json.loads(line)


def _console_runs() -> list[tuple[Block, str, str]]:
    runs = []
    for block in _of("console"):
        parts = re.split(r"^\$ ", block.text, flags=re.MULTILINE)[1:]
        for part in parts:
            command, _, output = part.partition("\n")
            runs.append((block, command, output))
    return runs


@pytest.mark.parametrize("run", _console_runs(), ids=lambda r: f"{r[0]}:{r[1][:40]}")
def test_console_block_prints_what_it_shows(run: tuple[Block, str, str], tmp_path: Path) -> None:
    block, command, output = run
    argv = shlex.split(command)
    assert argv[0] == "loopfuse", f"{block}: only loopfuse commands belong in console blocks"
    cwd = _workdir(tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "loopfuse.cli", *argv[1:]],
        cwd=cwd,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode in (0, 1), f"{block} {command}: {done.stderr[-2000:]}"
    assert _matches(output, done.stdout), f"{block} {command} printed:\n{done.stdout}"


def test_every_example_configuration_is_accepted() -> None:
    for path in sorted((ROOT / "examples").glob("*.toml")):
        parse_config(tomllib.loads(path.read_text()))


def test_the_site_builds_strictly(tmp_path: Path) -> None:
    pytest.importorskip("mkdocs", reason="mkdocs comes with the dev extra")
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert done.returncode == 0, done.stderr


def test_the_readme_links_to_files_that_exist() -> None:
    text = (ROOT / "README.md").read_text()
    targets = re.findall(r"\]\(([\w./-]+\.md)(?:#[\w-]*)?\)", text)
    assert "docs/quickstart.md" in targets
    assert [t for t in targets if not (ROOT / t).is_file()] == []


def _readme_commands() -> list[str]:
    blocks = [block for block in _of("sh") if block.page == "README.md"]
    lines = (line.split("#", 1)[0].strip() for block in blocks for line in block.text.splitlines())
    return [line for line in lines if line.startswith("loopfuse ")]


@pytest.mark.parametrize("command", _readme_commands())
def test_the_readmes_commands_run_from_a_clone(command: str, tmp_path: Path) -> None:
    """The README's command-line block, run as a reader from a fresh clone would (no session logs
    of their own yet: ``scan`` finds none)."""
    done = subprocess.run(
        [sys.executable, "-m", "loopfuse.cli", *shlex.split(command)[1:]],
        cwd=_workdir(tmp_path),
        env=_env(HOME=str(tmp_path)),
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, f"{command}: {done.stderr[-2000:]}"
