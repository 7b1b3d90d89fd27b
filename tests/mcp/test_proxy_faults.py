"""Faults at the proxy: malformed lines, a backend that dies, signals, bad command lines."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from loopfuse import Guard
from loopfuse.adapters.mcp_proxy.backend import Backend
from loopfuse.adapters.mcp_proxy.relay import RELAY_FAILED, StdioRelay

from .conftest import BACKEND, HERE, TIMEOUT, RawSession, child_env


def test_a_malformed_line_gets_a_json_rpc_error_and_the_session_goes_on(raw_proxy: RawSession) -> None:
    raw_proxy.initialize()
    raw_proxy.send_raw(b"{this is not json, and has no id to answer to\n")
    raw_proxy.send_raw(b'{"jsonrpc": "2.0", "id": 6, "method": "tools/list", oops\n')
    assert raw_proxy.receive() == {
        "jsonrpc": "2.0",
        "id": 6,
        "error": {"code": -32700, "message": "Parse error: the line is not JSON"},
    }
    raw_proxy.send_raw(b'{"id": 7, "method": "tools/list"}\n')
    assert raw_proxy.receive() == {
        "jsonrpc": "2.0",
        "id": 7,
        "error": {"code": -32600, "message": "Invalid Request: not a JSON-RPC 2.0 message"},
    }
    raw_proxy.send_raw(b'[{"jsonrpc": "2.0", "id": 8, "method": "tools/list"}]\n')
    assert raw_proxy.receive()["error"]["code"] == -32600
    assert raw_proxy.call("echo", {"text": "still here"})["result"]["content"][0]["text"] == "still here"
    assert raw_proxy.close() == 0
    assert "dropped 1 client lines and 0 MCP server lines" in raw_proxy.stderr


def test_killing_the_backend_answers_pending_and_later_requests_and_the_proxy_exits_non_zero(
    raw_proxy: RawSession,
) -> None:
    raw_proxy.initialize()
    backend_pid = int(raw_proxy.call("pid", {})["result"]["content"][0]["text"])
    raw_proxy.send(
        {
            "jsonrpc": "2.0",
            "id": 50,
            "method": "tools/call",
            "params": {"name": "sleep", "arguments": {"seconds": 30}},
        }
    )
    time.sleep(0.5)
    os.kill(backend_pid, signal.SIGKILL)
    pending = raw_proxy.response_to(50)
    assert pending["error"]["code"] == -32000
    assert "exited (killed by SIGKILL) before answering" in pending["error"]["message"]
    later = raw_proxy.call("echo", {"text": "anyone?"})
    assert "has exited" in later["error"]["message"]
    assert raw_proxy.close() == 128 + signal.SIGKILL
    assert "backend starting" in raw_proxy.stderr.split("exited (killed by SIGKILL)")[-1]


def test_a_backend_that_exits_by_itself_gives_a_non_zero_exit(tmp_path: Path) -> None:
    script = tmp_path / "quits.py"
    script.write_text("import sys\nprint('cannot find my settings', file=sys.stderr)\nsys.exit(0)\n")
    session = RawSession(["-m", "loopfuse.cli", "proxy", "--", sys.executable, str(script)], child_env())
    try:
        answer = session.request("initialize", {})
        assert "exited (status 0)" in answer["error"]["message"]
        assert session.close() == 1
        assert "cannot find my settings" in session.stderr.split("its last 1 stderr lines")[-1]
    finally:
        session.kill()


def test_the_death_report_cuts_long_stderr_lines(tmp_path: Path) -> None:
    """Each stderr line is relayed whole as it comes; the report at the server's death repeats
    at most 4 KiB of each of its last lines (not the whole line, which can be 64 MiB)."""
    script = tmp_path / "long_lines.py"
    script.write_text(
        "import sys\nprint('x' * 100_000, file=sys.stderr)\nprint('short line', file=sys.stderr)\nsys.exit(3)\n"
    )
    session = RawSession(["-m", "loopfuse.cli", "proxy", "--", sys.executable, str(script)], child_env())
    try:
        assert "exited (status 3)" in session.request("initialize", {})["error"]["message"]
        assert session.close() == 3
    finally:
        session.kill()
    relayed, report = session.stderr.split("its last 2 stderr lines:\n")
    assert "x" * 100_000 in relayed
    assert report == f"  | {'x' * 4096}... ({100_000 - 4096} more bytes cut)\n  | short line\n"


def test_sigterm_reaches_the_backend(proxy_argv: list[str], tmp_path: Path) -> None:
    marker = tmp_path / "signal.txt"
    session = RawSession(proxy_argv, child_env(SIGNAL_MARKER_FILE=str(marker)))
    try:
        session.initialize()
        session.proc.send_signal(signal.SIGTERM)
        assert session.proc.wait(TIMEOUT) == 128 + signal.SIGTERM
        assert marker.read_text() == "SIGTERM"
    finally:
        session.kill()


def test_the_backend_gets_the_proxy_environment_plus_env(tmp_path: Path) -> None:
    side = tmp_path / "side.txt"
    argv = ["-m", "loopfuse.cli", "proxy", "--env", f"SIDE_EFFECT_FILE={side}", "--", sys.executable, BACKEND]
    session = RawSession(argv, child_env())
    try:
        session.initialize()
        assert session.call("append", {"text": "x"})["result"]["isError"] is False
        assert session.close() == 0
    finally:
        session.kill()
    assert side.read_text() == "x\n"


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "loopfuse.cli", "proxy", *args]
    return subprocess.run(argv, env=child_env(), capture_output=True, text=True, timeout=TIMEOUT, check=False)


def test_usage_errors_exit_2() -> None:
    assert _cli().returncode == 2
    bad_env = _cli("--env", "NOEQUALS", "--", "true")
    assert bad_env.returncode == 2 and "KEY=VALUE" in bad_env.stderr
    assert _cli("--listen", "nope", "--", "true").returncode == 2
    bad_cap = _cli("--max-calls", "-1", "--", "true")
    assert bad_cap.returncode == 2 and "--max-calls -1: expected 0 (no cap)" in bad_cap.stderr


@pytest.mark.parametrize("url", ["notaurl", "ftp://127.0.0.1/mcp", "http://", "http://127.0.0.1:99999/mcp"])
def test_a_url_that_is_not_http_is_a_usage_error(url: str) -> None:
    done = _cli("--url", url)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert f"--url {url!r}: expected an http:// or https:// URL" in done.stderr


def test_an_incident_log_flag_that_cannot_be_a_log_is_named_as_the_flag(tmp_path: Path) -> None:
    done = _cli("--incident-log", str(tmp_path), "--", "true")
    assert done.returncode == 2
    assert f"--incident-log {str(tmp_path)!r} is not allowed: expected a regular file" in done.stderr


def test_a_command_that_does_not_exist_exits_127() -> None:
    result = _cli("--", "/nonexistent/mcp-server")
    assert result.returncode == 127 and "cannot start" in result.stderr


MINIMAL_BACKEND = """\
import json, sys
for line in sys.stdin:
    msg = json.loads(line)
    if "id" in msg:
        result = {"content": [{"type": "text", "text": "ok"}], "isError": False}
        print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}), flush=True)
"""


def test_without_the_mcp_extra_stdio_works_and_http_modes_print_the_install_hint(tmp_path: Path) -> None:
    for name in ("fastmcp", "mcp", "mcp_types"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "__init__.py").write_text(f'raise ImportError("No module named {name}")\n')
    backend = tmp_path / "minimal.py"
    backend.write_text(MINIMAL_BACKEND)
    env = child_env()
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path), env["PYTHONPATH"]])
    argv = ["-m", "loopfuse.cli", "proxy", "--config", "/dev/null", "--", sys.executable, str(backend)]
    session = RawSession(argv, env)
    try:
        answers = [session.call("probe", {"n": 1}) for _ in range(7)]
        # Defaults, with results reported by the proxy: the same call returning the same
        # result five times in a row is the limit (same_result_limit), the sixth is refused.
        assert [a["result"]["isError"] for a in answers] == [False] * 5 + [True] * 2
        assert session.close() == 0
        assert "loopfuse denied probe" in session.stderr
    finally:
        session.kill()
    argv = [sys.executable, "-m", "loopfuse.cli", "proxy", "--url", "http://127.0.0.1:9/mcp"]
    result = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=TIMEOUT, check=False)
    assert result.returncode == 2 and "pip install 'loopfuse[mcp]'" in result.stderr


JSON_LOGGING_BACKEND = """\
import json, sys
def write(obj):
    print(json.dumps(obj), flush=True)
write({"level": 30, "msg": "server listening"})
for n, line in enumerate(sys.stdin, 1):
    msg = json.loads(line)
    write({"level": 20, "msg": "handling " + msg["method"], "id": msg["id"]})
    result = {"content": [{"type": "text", "text": f"job running: {n * 10}% done"}], "isError": False}
    write({"jsonrpc": "2.0", "id": msg["id"], "result": result})
"""


def test_json_log_lines_from_the_server_are_dropped_not_taken_as_answers(tmp_path: Path) -> None:
    """A server logging JSON objects to stdout (pino, bunyan, structlog), one naming the
    request's id before each answer: the client gets only the answers, and the guard judges
    the polled job's changing answers, so no call is refused as returning the same result."""
    backend = tmp_path / "json_logging.py"
    backend.write_text(JSON_LOGGING_BACKEND)
    argv = ["-m", "loopfuse.cli", "proxy", "--config", "/dev/null", "--", sys.executable, str(backend)]
    session = RawSession(argv, child_env())
    try:
        texts = [session.call("status", {"job": 7})["result"]["content"][0]["text"] for _ in range(8)]
        assert texts == [f"job running: {n * 10}% done" for n in range(1, 9)]
        assert session.close() == 0
    finally:
        session.kill()
    assert "dropped 0 client lines and 9 MCP server lines" in session.stderr


class _BrokenClientStream:
    """A client stream that fails in a way the relay does not expect (a stand-in for a bug)."""

    def __init__(self) -> None:
        self.written: list[bytes] = []

    async def readuntil(self, separator: bytes = b"\n") -> bytes:
        raise RuntimeError("an unexpected failure")

    async def readexactly(self, n: int) -> bytes:
        raise RuntimeError("an unexpected failure")

    def write(self, data: bytes) -> None:
        self.written.append(data)

    async def drain(self) -> None:
        pass


async def test_a_failed_relay_task_ends_the_proxy_loudly(caplog: pytest.LogCaptureFixture) -> None:
    backend = await Backend.start([sys.executable, str(HERE / "raw_server.py")], {})
    stream = _BrokenClientStream()
    relay = StdioRelay(Guard.from_config({}), "agent", backend, stream, stream)
    assert await asyncio.wait_for(relay.run(), TIMEOUT) == RELAY_FAILED
    assert "the client-to-server relay failed (RuntimeError); stopping." in caplog.text
    assert backend.proc.returncode is not None
