"""The Redis store over TLS (``rediss://``), as managed Redis services serve it: a real
redis-server with a TLS port and a certificate made for the test; the same decisions as in
process, from threads' and asyncio's hosts, nothing failed open."""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import NoReturn

import pytest

from loopfuse import Guard
from tests.store_fixtures import RedisServer, require_redis_server, unique_prefix

SEARCH = ("search", {"q": "the same"})


def _needed(what: str) -> NoReturn:
    if os.environ.get("CI"):
        pytest.fail(f"{what} (CI is set, so this is a failure)")
    pytest.skip(what)


def _certificate(directory: Path) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 and its key."""
    openssl = shutil.which("openssl")
    if openssl is None:
        _needed("openssl is not installed")
    cert, key = directory / "cert.pem", directory / "key.pem"
    subject = ("-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1")
    made = ("-keyout", str(key), "-out", str(cert))
    subprocess.run(
        [openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", *subject, *made],
        check=True,
        capture_output=True,
    )
    return cert, key


@pytest.fixture
def tls_url(tmp_path: Path) -> Iterator[str]:
    """The URL of a redis-server's TLS port, whose certificate the client verifies."""
    require_redis_server()
    cert, key = _certificate(tmp_path)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    tls = ("--tls-port", str(port), "--tls-cert-file", str(cert), "--tls-key-file", str(key))
    server = RedisServer(tmp_path, (*tls, "--tls-ca-cert-file", str(cert), "--tls-auth-clients", "no"))
    try:
        server.start()
    except RuntimeError:
        _needed("this redis-server does not serve TLS")
    yield f"rediss://127.0.0.1:{port}/0?ssl_ca_certs={cert}"
    server.stop()


def tls_guard(url: str) -> Guard:
    return Guard.from_config({"store": {"url": url, "prefix": unique_prefix()}})


def first_denied(guard: Guard) -> int:
    """The index of the first denied call of a loop of one search, each result reported."""
    for i in range(12):
        if not guard.check(*SEARCH, "a").allowed:
            return i
        guard.record_result(*SEARCH, "no results", "a", ok=True)
    raise AssertionError("the loop was never denied")


async def afirst_denied(guard: Guard) -> int:
    for i in range(12):
        if not (await guard.acheck(*SEARCH, "a")).allowed:
            return i
        await guard.arecord_result(*SEARCH, "no results", "a", ok=True)
    raise AssertionError("the loop was never denied")


def test_a_guard_over_tls_decides_as_in_process(tls_url: str) -> None:
    expected = first_denied(Guard.from_config({}))
    guard = tls_guard(tls_url)
    assert first_denied(guard) == expected
    guard.close()
    assert guard.stats()["fail_open"] == {}


def test_an_async_guard_over_tls_decides_as_in_process(tls_url: str) -> None:
    expected = first_denied(Guard.from_config({}))
    guard = tls_guard(tls_url)

    async def loop() -> int:
        denied = await afirst_denied(guard)
        await guard.aclose()
        return denied

    assert asyncio.run(loop()) == expected
    assert guard.stats()["fail_open"] == {}
