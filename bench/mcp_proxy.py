"""Latency of a trivial MCP tool call, direct to a stdio backend and through ``loopfuse proxy``.

Two backends: the FastMCP test server (tests/mcp/backend_server.py, tool ``echo``) and a
minimal standard-library JSON-RPC server that answers at once, which isolates what the
proxy adds. Every call has distinct arguments, so the guard checks and allows each one.
Direct and proxied rounds alternate to spread machine noise over both.

    PYTHONPATH=src python bench/mcp_proxy.py [--calls 1000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FASTMCP_BACKEND = ROOT / "tests" / "mcp" / "backend_server.py"
MINIMAL_BACKEND = """\
import json, sys
for line in sys.stdin:
    msg = json.loads(line)
    if "id" not in msg:
        continue
    if msg["method"] == "tools/call":
        text = msg["params"]["arguments"]["text"]
        result = {"content": [{"type": "text", "text": text}], "isError": False}
    else:
        result = {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
                  "serverInfo": {"name": "minimal", "version": "0"}}
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}) + "\\n")
    sys.stdout.flush()
"""


class Session:
    """A stdio MCP server spoken to with blocking line I/O, one request at a time."""

    def __init__(self, argv: list[str]) -> None:
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]),
        }
        self.proc = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env
        )
        self.next_id = 0
        init = {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "bench", "version": "0"},
        }
        self.request("initialize", init)
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, message: dict[str, object]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def request(self, method: str, params: dict[str, object]) -> dict[str, object]:
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        assert self.proc.stdout is not None
        while True:
            answer: dict[str, object] = json.loads(self.proc.stdout.readline())
            if answer.get("id") == self.next_id:
                return answer

    def timed_calls(self, calls: int, tag: str) -> list[float]:
        samples = []
        for i in range(calls):
            start = time.perf_counter()
            answer = self.request("tools/call", {"name": "echo", "arguments": {"text": f"{tag}-{i}"}})
            samples.append(time.perf_counter() - start)
            assert "result" in answer and not answer["result"]["isError"], answer  # type: ignore[index]
        return samples

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)


def measure(backend: list[str], config: Path, calls: int, rounds: int) -> dict[str, list[float]]:
    proxy = [sys.executable, "-m", "loopfuse.cli", "proxy", "--config", str(config), "--", *backend]
    sessions = {"direct": Session(backend), "proxy": Session(proxy)}
    samples: dict[str, list[float]] = {"direct": [], "proxy": []}
    try:
        for name, session in sessions.items():
            session.timed_calls(min(200, calls), f"warm-{name}")
        for r in range(rounds):
            for name, session in sessions.items():
                samples[name] += session.timed_calls(calls, f"{name}-{r}")
    finally:
        for session in sessions.values():
            session.close()
    return samples


def p99(values: list[float]) -> float:
    return statistics.quantiles(values, n=100)[98]


def report(label: str, samples: dict[str, list[float]]) -> None:
    direct, proxied = samples["direct"], samples["proxy"]
    d_med, p_med = statistics.median(direct), statistics.median(proxied)
    d_99, p_99 = p99(direct), p99(proxied)
    print(f"{label} ({len(direct)} calls each)")
    print(f"  {'':<8} {'median (us)':>12} {'p99 (us)':>10}")
    print(f"  {'direct':<8} {d_med * 1e6:>12.0f} {d_99 * 1e6:>10.0f}")
    print(f"  {'proxy':<8} {p_med * 1e6:>12.0f} {p_99 * 1e6:>10.0f}")
    print(f"  {'added':<8} {(p_med - d_med) * 1e6:>12.0f} {(p_99 - d_99) * 1e6:>10.0f}")
    print(f"  ratio proxy/direct at the median: {p_med / d_med:.2f}  (target: at most 1000 us added)")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    opts = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        config = Path(tmp) / "loopfuse.toml"
        config.write_text("[circuit_breaker]\nduplicate_limit = 6\nmax_calls_per_agent = 0\n")
        minimal = Path(tmp) / "minimal_backend.py"
        minimal.write_text(MINIMAL_BACKEND)
        for label, backend in (
            ("minimal stdlib backend", [sys.executable, str(minimal)]),
            ("FastMCP backend", [sys.executable, str(FASTMCP_BACKEND)]),
        ):
            report(label, measure(backend, config, opts.calls, opts.rounds))


if __name__ == "__main__":
    main()
