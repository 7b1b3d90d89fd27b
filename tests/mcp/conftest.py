"""Fixtures for the MCP tests: the backend script, a guard configuration, the proxy command,
and a raw JSON-RPC session over a proxy subprocess (for exit codes and malformed lines)."""

from __future__ import annotations

import contextlib
import json
import os
import queue
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastmcp")

HERE = Path(__file__).resolve().parent
SRC = HERE.parents[1] / "src"
BACKEND = str(HERE / "backend_server.py")
TIMEOUT = 20.0


def child_env(**extra: str) -> dict[str, str]:
    """Our environment with the worktree's source first on PYTHONPATH."""
    path = os.pathsep.join(p for p in (str(SRC), os.environ.get("PYTHONPATH", "")) if p)
    return {**os.environ, "PYTHONPATH": path, **extra}


@pytest.fixture
def side_file(tmp_path: Path) -> Path:
    return tmp_path / "side_effects.txt"


@pytest.fixture
def incident_log(tmp_path: Path) -> Path:
    return tmp_path / "incidents.jsonl"


@pytest.fixture
def config_file(tmp_path: Path) -> Path:
    path = tmp_path / "loopfuse.toml"
    path.write_text(
        "[circuit_breaker]\nduplicate_limit = 3\nresult_limit = 3\n\n[guard]\nabort_after_denials = 0\n"
    )
    return path


@pytest.fixture
def proxy_argv(config_file: Path, incident_log: Path, side_file: Path) -> list[str]:
    """``loopfuse proxy`` in front of the test backend, as a client configuration would run it."""
    return [
        *("-m", "loopfuse.cli", "proxy", "--config", str(config_file)),
        *("--incident-log", str(incident_log), "--env", f"SIDE_EFFECT_FILE={side_file}"),
        *("--", sys.executable, BACKEND),
    ]


class RawSession:
    """A proxy subprocess spoken to line by line, as a minimal MCP client would."""

    def __init__(self, argv: list[str], env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, *argv],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )
        self._lines: queue.Queue[bytes] = queue.Queue()
        self._stderr: list[bytes] = []
        threading.Thread(target=self._pump, args=(self.proc.stdout, self._lines.put), daemon=True).start()
        threading.Thread(target=self._pump, args=(self.proc.stderr, self._stderr.append), daemon=True).start()
        self._next_id = 0

    @staticmethod
    def _pump(stream: Any, sink: Any) -> None:
        with stream:  # closed at end of file, so no pipe is left for the garbage collector
            for line in stream:
                sink(line)

    def send_raw(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, message: dict[str, Any]) -> None:
        self.send_raw(json.dumps(message).encode() + b"\n")

    def receive(self, timeout: float = TIMEOUT) -> dict[str, Any]:
        message: dict[str, Any] = json.loads(self.receive_line(timeout))
        return message

    def receive_line(self, timeout: float = TIMEOUT) -> bytes:
        """The next line the proxy wrote, as it wrote it."""
        return self._lines.get(timeout=timeout)

    def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """Send a request and wait for its response, skipping notifications."""
        self._next_id += 1
        self.send({"jsonrpc": "2.0", "id": self._next_id, "method": method, "params": params or {}})
        return self.response_to(self._next_id)

    def response_to(self, request_id: int) -> dict[str, Any]:
        while True:
            message = self.receive()
            if message.get("id") == request_id and "method" not in message:
                return message

    def initialize(self) -> dict[str, Any]:
        """The handshake-era opening (initialize, then notifications/initialized)."""
        params = {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "raw-test-client", "version": "0"},
        }
        answer = self.request("initialize", params)
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return answer

    def call(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        return self.request("tools/call", {"name": tool, "arguments": arguments})

    def close(self, timeout: float = TIMEOUT) -> int:
        """Close the proxy's stdin (the client leaves); the proxy's exit status."""
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        return self.proc.wait(timeout)

    @property
    def stderr(self) -> str:
        return b"".join(self._stderr).decode("utf-8", "replace")

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(TIMEOUT)
        assert self.proc.stdin is not None
        with contextlib.suppress(BrokenPipeError):  # unsent input of a proxy that is gone
            self.proc.stdin.close()


@pytest.fixture
def raw_proxy(proxy_argv: list[str]) -> Iterator[RawSession]:
    session = RawSession(proxy_argv, child_env())
    yield session
    session.kill()
