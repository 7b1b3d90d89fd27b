"""Headless Chromium for the report tests: a screenshot, the DOM after the page's script
ran, and small readers for both (stdlib only: PNG pixels, an element tree)."""

from __future__ import annotations

import shutil
import struct
import subprocess
import tempfile
import zlib
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

CHROMIUM = shutil.which("chromium")
FLAGS = (
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
)  # fmt: skip
_VOID = {"meta", "input", "br", "img", "link", "hr", "col", "wbr"}


def chromium(url: str, *action: str) -> str:
    assert CHROMIUM is not None
    with tempfile.TemporaryDirectory() as profile:
        done = subprocess.run(
            [CHROMIUM, *FLAGS, f"--user-data-dir={profile}", "--window-size=1280,900", *action, url],
            capture_output=True, text=True, timeout=90, check=False,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def dump_dom(page: Path, fragment: str = "") -> Element:
    return parse_html(chromium(page.as_uri() + fragment, "--dump-dom"))


def screenshot(page: Path, target: Path) -> None:
    chromium(page.as_uri(), f"--screenshot={target}")


@dataclass
class Element:
    tag: str
    attrs: dict[str, str]
    children: list[Element] = field(default_factory=list)
    text: str = ""

    def all(self, tag: str | None = None, **attrs: str) -> list[Element]:
        """Every element below this one with that tag and those attribute values."""
        found: list[Element] = []
        for child in self.children:
            if (tag is None or child.tag == tag) and all(child.attrs.get(k) == v for k, v in attrs.items()):
                found.append(child)
            found += child.all(tag, **attrs)
        return found

    def by_id(self, ident: str) -> Element | None:
        found = self.all(id=ident)
        return found[0] if found else None

    @property
    def hidden(self) -> bool:
        return "hidden" in self.attrs

    @property
    def all_text(self) -> str:
        return self.text + "".join(c.all_text for c in self.children)


class _Builder(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.root = Element("#document", {})
        self.stack = [self.root]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        element = Element(tag, {k: v or "" for k, v in attrs})
        self.stack[-1].children.append(element)
        if tag not in _VOID:
            self.stack.append(element)

    def handle_endtag(self, tag: str) -> None:
        for depth in range(len(self.stack) - 1, 0, -1):
            if self.stack[depth].tag == tag:
                del self.stack[depth:]
                return

    def handle_data(self, data: str) -> None:
        self.stack[-1].text += data


def parse_html(text: str) -> Element:
    builder = _Builder()
    builder.feed(text)
    return builder.root


def png_pixels(path: Path, rows: int) -> tuple[int, int, list[bytes]]:
    """Width, height and the first ``rows`` RGB(A) rows of an 8-bit PNG, unfiltered."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    chunks: dict[bytes, bytes] = {}
    offset = 8
    while offset < len(data):
        (length,) = struct.unpack(">I", data[offset : offset + 4])
        kind = data[offset + 4 : offset + 8]
        chunks[kind] = chunks.get(kind, b"") + data[offset + 8 : offset + 8 + length]
        offset += 12 + length
    width, height, depth, color = struct.unpack(">IIBB", chunks[b"IHDR"][:10])
    assert depth == 8 and color in (2, 6), (depth, color)
    size = 3 if color == 2 else 4
    return width, height, _unfilter(zlib.decompress(chunks[b"IDAT"]), width, min(rows, height), size)


def _unfilter(raw: bytes, width: int, height: int, size: int) -> list[bytes]:
    rows: list[bytes] = []
    stride, previous = width * size, bytearray(width * size)
    for y in range(height):
        kind, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)])
        for i in range(stride):
            left = line[i - size] if i >= size else 0
            up, corner = previous[i], previous[i - size] if i >= size else 0
            line[i] = (line[i] + _predict(kind, left, up, corner)) & 0xFF
        rows.append(bytes(line))
        previous = line
    return rows


def _predict(kind: int, left: int, up: int, corner: int) -> int:
    if kind == 0:
        return 0
    if kind == 1:
        return left
    if kind == 2:
        return up
    if kind == 3:
        return (left + up) // 2
    estimate = left + up - corner
    pa, pb, pc = abs(estimate - left), abs(estimate - up), abs(estimate - corner)
    return left if pa <= pb and pa <= pc else (up if pb <= pc else corner)
