"""Hypothesis over malformed lines from either side of the stdio proxy: after each one, the
next request is answered, and everything the client reads is JSON. One proxy per test
(a real subprocess); bounded examples, and every read has a timeout."""

from __future__ import annotations

import itertools
import sys
from collections.abc import Callable
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from .conftest import HERE, TIMEOUT, RawSession, child_env

RAW_SERVER = str(HERE / "raw_server.py")
ARGV = ["-m", "loopfuse.cli", "proxy", "--config", "/dev/null", "--", sys.executable, RAW_SERVER]
FRAGMENTS = [
    *(b"{", b"}", b"[", b"]", b":", b",", b'"', b"\\", b" "),
    *(b'"id"', b'"jsonrpc"', b'"2.0"', b'"method"', b'"tools/call"', b'"params"'),
    *(b"1", b"-0", b"1e999", b"null", b"true", b'"x"', b'"\\ud800"', b"\xff", b"\x00", b"\xe2\x82"),
    *(b"[" * 1000, b'{"a":' * 600, b"]" * 1000),
]
junk_lines = st.one_of(
    st.lists(st.sampled_from(FRAGMENTS), min_size=1, max_size=40).map(b"".join),
    st.binary(min_size=1, max_size=300),
).map(lambda line: line.replace(b"\n", b" "))
FUZZ = settings(max_examples=60, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])


def _echo(session: RawSession, request_id: int) -> None:
    """A valid request, answered; the lines before its answer are JSON-RPC errors."""
    params = {"name": "echo", "arguments": {"text": f"call {request_id}"}}
    session.send({"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params})
    while (message := session.receive(TIMEOUT)).get("id") != request_id:
        assert "error" in message or "result" in message, message
    assert message["result"]["content"][0]["text"] == f"call {request_id}"


def test_fuzz_malformed_client_lines_never_stop_the_relay() -> None:
    session = RawSession(ARGV, child_env())
    ids = itertools.count(10**6)

    @FUZZ
    @given(junk_lines)
    def one(line: bytes) -> None:
        session.send_raw(line + b"\n")
        _echo(session, next(ids))

    _runs_and_closes_cleanly(session, one)


def test_fuzz_malformed_backend_lines_never_reach_the_client() -> None:
    session = RawSession(ARGV, child_env())
    ids = itertools.count(10**6)

    @FUZZ
    @given(junk_lines)
    def one(line: bytes) -> None:
        request_id = next(ids)
        params = {"name": "emit", "arguments": {"hex": line.hex(), "text": str(request_id)}}
        session.send({"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params})
        while not _answer_to(session.receive(TIMEOUT), request_id):
            pass  # a line that happens to be JSON-RPC (a batch too) is relayed; anything else is dropped
        _echo(session, next(ids))

    _runs_and_closes_cleanly(session, one)


def _answer_to(message: Any, request_id: int) -> bool:
    return isinstance(message, dict) and message.get("id") == request_id and "error" not in message


def _runs_and_closes_cleanly(session: RawSession, run: Callable[[], None]) -> None:
    try:
        run()
        assert session.close() == 0
        assert "Traceback" not in session.stderr
    finally:
        session.kill()
