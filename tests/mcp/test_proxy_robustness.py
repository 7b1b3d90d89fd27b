"""The stdio proxy never hangs or loses answers: pipelined input from a file, empty input,
malformed lines from either side, grandchildren at shutdown. Real subprocesses throughout,
in front of ``raw_server.py`` (a raw JSON-RPC stdio server); every wait has a timeout."""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.store_fixtures import RedisServer

from .conftest import HERE, TIMEOUT, RawSession, child_env

RAW_SERVER = str(HERE / "raw_server.py")
# Deeper than Python's json module reads on any supported version (3.11 stops near 1,000
# levels, 3.12 near 1,500, 3.13 near 10,000): such a line is never JSON to the proxy.
DEEP = 100_000


def _argv(*backend: str, config: str = "/dev/null") -> list[str]:
    return ["-m", "loopfuse.cli", "proxy", "--config", config, "--", sys.executable, *backend]


@pytest.fixture
def raw_session() -> Iterator[RawSession]:
    session = RawSession(_argv(RAW_SERVER), child_env())
    yield session
    session.kill()


def _request(request_id: int, tool: str, **arguments: Any) -> dict[str, Any]:
    params = {"name": tool, "arguments": arguments}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


def _text(answer: dict[str, Any]) -> str:
    text: str = answer["result"]["content"][0]["text"]
    return text


def _run(stdin: Any, timeout: float = TIMEOUT) -> subprocess.CompletedProcess[bytes]:
    argv = [sys.executable, *_argv(RAW_SERVER)]
    return subprocess.run(
        argv, stdin=stdin, capture_output=True, env=child_env(), timeout=timeout, check=False
    )


def test_pipelined_requests_from_a_file_all_get_their_answer(tmp_path: Path) -> None:
    requests = [{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}]
    requests += [_request(i, "echo", text=f"call {i}", delay=0.3) for i in range(2, 9)]
    path = tmp_path / "requests.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in requests))
    with path.open("rb") as stdin:
        result = _run(stdin)
    answers = [json.loads(line) for line in result.stdout.splitlines()]
    assert result.returncode == 0, result.stderr
    assert sorted(a["id"] for a in answers) == list(range(1, 9))
    assert sorted(_text(a) for a in answers[1:] if a["id"] != 1) == [f"call {i}" for i in range(2, 9)]
    assert b"Traceback" not in result.stderr


def test_a_crash_after_the_input_ended_answers_what_was_pending_and_exits_with_its_status(
    tmp_path: Path,
) -> None:
    requests = [_request(1, "echo", text="slow", delay=5), _request(2, "echo", text="slow", delay=5)]
    requests.append(_request(3, "crash", status=4, delay=0.5))
    path = tmp_path / "requests.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in requests))
    with path.open("rb") as stdin:
        result = _run(stdin)
    answers = [json.loads(line) for line in result.stdout.splitlines()]
    assert sorted(a["id"] for a in answers) == [1, 2, 3]
    assert {a["error"]["code"] for a in answers} == {-32000}
    assert "exited (status 4) before answering" in answers[0]["error"]["message"]
    assert result.returncode == 4
    stderr = result.stderr.decode()
    assert "MCP server 'python" in stderr and "exited (status 4)." in stderr
    assert "  | crashing" in stderr.split("its last 1 stderr lines")[-1]


def test_a_server_that_exits_non_zero_once_the_client_left_is_reported() -> None:
    session = RawSession(_argv(RAW_SERVER), child_env(RAW_EXIT_STATUS="5"))
    try:
        assert _text(session.call("echo", {"text": "last"})) == "last"
        assert session.close() == 5
    finally:
        session.kill()
    assert "exited (status 5)." in session.stderr


def test_empty_input_exits_0_at_once_without_a_traceback() -> None:
    start = time.monotonic()
    result = _run(subprocess.DEVNULL, timeout=10)
    assert result.returncode == 0
    assert time.monotonic() - start < 5
    assert result.stdout == b""
    assert b"Traceback" not in result.stderr and b"Error" not in result.stderr


def _nested(request_id: int) -> bytes:
    head = f'{{"jsonrpc": "2.0", "id": {request_id}, "method": "tools/call", "params": '
    return head.encode() + b"[" * DEEP + b"]" * DEEP + b"}"


# (line, the id of the -32700 answer it gets, or None when it is dropped)
CLIENT_LINES = {
    "deep nesting without an id": (b"[" * DEEP, None),
    "deep nesting with an id": (_nested(41), 41),
    "json-shaped junk": (b'{"a": [1, 2', None),
    "json-shaped junk with an id": (b'{"jsonrpc": "2.0", "id": 42, "method": "tools/list", "params": {', 42),
    "unbalanced brackets": (b"]]]}}}{{{[[[", None),
    "invalid utf-8": (b'{"jsonrpc": "2.0", "id": 43, "method": "tools/list", "x": "\xff\xfe"}', 43),
    "nul bytes": (b"\x00" * 100, None),
    "huge junk line": (b"{" + b"x" * (8 << 20), None),
    "line over the limit": (b'{"jsonrpc": "2.0", "id": 44, "junk": "' + b"y" * (65 << 20), 44),
    "line over the limit without an id": (b'{"junk": "' + b"y" * (65 << 20), None),
}


@pytest.mark.parametrize("case", CLIENT_LINES)
def test_after_a_malformed_client_line_the_next_request_is_answered(
    raw_session: RawSession, case: str
) -> None:
    line, answer_id = CLIENT_LINES[case]
    raw_session.send_raw(line + b"\n")
    if answer_id is not None:
        answer = raw_session.receive()
        assert (answer["id"], answer["error"]["code"]) == (answer_id, -32700)
    raw_session.send(_request(1, "echo", text="still here"))
    assert _text(raw_session.receive()) == "still here"
    assert raw_session.close() == 0


def test_a_long_malformed_client_line_holds_back_no_answer(raw_session: RawSession) -> None:
    """Looking for the id of a malformed line reads its first 64 KiB only: the whole of a 48 MiB
    line of many JSON tokens took the proxy seconds, while no answer got through."""
    raw_session.send(_request(1, "echo", text="due at 0.5 s", delay=0.5))
    start = time.monotonic()
    raw_session.send_raw(b'{"jsonrpc": "2.0", "params": [x' + b'"a",' * (12 << 20) + b"\n")
    assert _text(raw_session.receive()) == "due at 0.5 s"
    assert time.monotonic() - start < 3.0
    assert raw_session.close() == 0


def _strict_json(line: bytes) -> Any:
    def refuse(constant: str) -> None:
        raise ValueError(f"not JSON: {constant}")

    return json.loads(line, parse_constant=refuse)


def test_the_proxys_own_answers_to_an_id_json_cannot_hold_are_json(raw_session: RawSession) -> None:
    """An id of 1e400 reads as infinity: the proxy's answers to it say null (they said Infinity)."""
    call = b'{"jsonrpc": "2.0", "id": 1e400, "method": "tools/call", '
    raw_session.send_raw(call + b'"params": {"name": "crash", "arguments": {"delay": 0.3}}}\n')
    pending = _strict_json(raw_session.receive_line())
    assert (pending["id"], pending["error"]["code"]) == (None, -32000)
    raw_session.send_raw(b'{"jsonrpc": "2.0", "id": -1e400, "method": "tools/list"}\n')
    later = _strict_json(raw_session.receive_line())
    assert later["id"] is None and "has exited" in later["error"]["message"]


BACKEND_LINES: dict[str, bytes | tuple[bytes, int]] = {
    "deep nesting": b"[" * DEEP + b"]" * DEEP,
    "deep nesting, an answer to nobody": b'{"jsonrpc": "2.0", "id": 999, "result": '
    + b"[" * DEEP
    + b"]" * DEEP
    + b"}",
    "json-shaped junk": b'{"jsonrpc": "2.0", "id": 999, "result": {',
    "not json at all": b"Server ready!",
    "a bare json number": b"12345",
    "invalid utf-8": b'{"jsonrpc": "2.0", "method": "notifications/x", "params": {"x": "\xff"}}',
    "huge junk line": (b"[" + b"x" * 1023, 8 << 10),
    "line over the limit": (b"{" + b"z" * 1023, 65 << 10),
}


@pytest.mark.parametrize("case", BACKEND_LINES)
def test_after_a_malformed_backend_line_the_next_request_is_answered(
    raw_session: RawSession, case: str
) -> None:
    line, times = value if isinstance(value := BACKEND_LINES[case], tuple) else (value, 1)
    raw_session.send(_request(1, "emit", hex=line.hex(), times=times))
    assert _text(raw_session.receive()) == "emitted"  # the malformed line never reached us
    raw_session.send(_request(2, "echo", text="still here"))
    assert _text(raw_session.receive()) == "still here"
    assert raw_session.close() == 0
    assert "dropped 0 client lines and 1 MCP server lines" in raw_session.stderr


def test_an_unreadable_answer_to_a_pending_request_becomes_an_error(raw_session: RawSession) -> None:
    deep = b'{"jsonrpc": "2.0", "id": 7, "result": ' + b"[" * DEEP + b"]" * DEEP + b"}"
    raw_session.send(_request(7, "emit", hex=deep.hex()))
    answer = raw_session.receive()
    assert (answer["id"], answer["error"]["code"]) == (7, -32603)
    raw_session.send(_request(8, "echo", text="still here"))
    assert _text(raw_session.response_to(8)) == "still here"
    assert raw_session.close() == 0


def test_an_answer_over_the_line_limit_to_a_pending_request_becomes_an_error(raw_session: RawSession) -> None:
    start = b'{"jsonrpc": "2.0", "id": 7, "result": "' + b"z" * 1000
    raw_session.send(_request(7, "emit", hex=start.hex(), times=66 << 10))  # one line of 66 MB
    answer = raw_session.receive()
    assert (answer["id"], answer["error"]["code"]) == (7, -32603)
    raw_session.send(_request(8, "echo", text="still here"))
    assert _text(raw_session.response_to(8)) == "still here"
    assert raw_session.close() == 0


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in ("Z", "X")


def _gone_within(pid: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not _alive(pid)


def test_no_grandchild_is_left_after_the_client_leaves(raw_session: RawSession) -> None:
    raw_session.send(_request(1, "spawn"))
    grandchild = int(_text(raw_session.receive()))
    assert _alive(grandchild)
    start = time.monotonic()
    assert raw_session.close() == 0
    assert time.monotonic() - start < 4.5  # not the 5 s grace: the server itself exited
    assert _gone_within(grandchild, 5)


def test_no_grandchild_is_left_after_a_signal(raw_session: RawSession) -> None:
    raw_session.send(_request(1, "spawn"))
    grandchild = int(_text(raw_session.receive()))
    raw_session.proc.terminate()
    assert raw_session.proc.wait(TIMEOUT) == 128 + 15
    assert _gone_within(grandchild, 5)


def test_escalation_is_logged_once(tmp_path: Path) -> None:
    config = tmp_path / "loopfuse.toml"
    config.write_text("[circuit_breaker]\nduplicate_limit = 1\n\n[guard]\nabort_after_denials = 2\n")
    session = RawSession(_argv(RAW_SERVER, config=str(config)), child_env())
    try:
        answers = [session.call("echo", {"text": "same"}) for _ in range(8)]
        stopped = [a for a in answers if "Stop calling tools" in _text(a)]
        assert len(stopped) >= 3 and all(a["result"]["isError"] for a in stopped)
        assert session.close() == 0
    finally:
        session.kill()
    assert session.stderr.count("escalated") == 1


def test_calls_whose_arguments_are_not_an_object_are_checked_too(tmp_path: Path) -> None:
    """A server that takes such arguments runs the call, so the guard judges it as any other."""
    config = tmp_path / "loopfuse.toml"
    config.write_text(
        "[circuit_breaker]\nduplicate_limit = 2\nresult_limit = 2\n\n[guard]\nabort_after_denials = 0\n"
    )
    session = RawSession(_argv(RAW_SERVER, config=str(config)), child_env())
    try:
        answers = []
        for request_id in range(1, 4):
            params = {"name": "echo", "arguments": ["same", 1]}
            session.send({"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params})
            answers.append(_text(session.response_to(request_id)))
        assert answers[:2] == ['["same", 1]'] * 2
        assert answers[2].startswith("loopfuse refused this echo call") and "(result_limit 2)" in answers[2]
        assert session.close() == 0
    finally:
        session.kill()


def test_a_check_waiting_on_redis_holds_back_no_answer_to_an_earlier_call(
    own_redis: RedisServer, tmp_path: Path
) -> None:
    """The stdio proxy with its guard on Redis checks on the event loop without blocking it:
    while a check waits on a stalled Redis, the answer to a call made before still reaches the
    client (a blocking check froze the proxy until the store's timeout)."""
    config = tmp_path / "loopfuse.toml"
    config.write_text(f'[store]\nurl = "{own_redis.url}"\ntimeout = 60\n')
    session = RawSession(_argv(RAW_SERVER, config=str(config)), child_env())
    try:
        assert _text(session.call("echo", {"text": "warm"})) == "warm"  # connected, library loaded
        session.send(_request(101, "echo", text="earlier", delay=2.0))
        time.sleep(0.5)  # its check is done (milliseconds): the server answers 2 s after it got it
        own_redis.pause()
        session.send(_request(102, "echo", text="later"))
        try:
            earlier = session.receive(timeout=15)
        except queue.Empty:
            pytest.fail("the earlier call's answer waited for the stalled check")
        own_redis.resume()
        assert earlier["id"] == 101 and _text(earlier) == "earlier"
        assert _text(session.response_to(102)) == "later"
        assert session.close() == 0
    finally:
        own_redis.resume()
        session.kill()
