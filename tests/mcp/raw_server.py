"""A raw JSON-RPC stdio server (standard library only) for the proxy's robustness tests.

Each request is answered from its own thread after ``delay`` seconds (from the tool's
arguments), so answers are still in flight when the client's input ends; at the end of
its input the server answers everything it was asked, then exits. Tools:

- ``echo {text, delay}``: the text back.
- ``emit {hex, times}``: first writes the bytes ``hex`` (``times`` times) as a line of its
  own on stdout (a malformed line from the server), then answers.
- ``spawn``: starts a grandchild that sleeps for a minute; answers its pid.
- ``crash {status, delay}``: writes "crashing" to stderr and exits at once with ``status``,
  without answering anything still in flight.

At the end of its input the server exits with ``$RAW_EXIT_STATUS`` (0 if unset).

Arguments that are not an object are taken too: their JSON is the answer.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from typing import Any

_lock = threading.Lock()


def _write(data: bytes) -> None:
    with _lock:
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()


def _answer(request_id: Any, text: str) -> None:
    result = {"content": [{"type": "text", "text": text}], "isError": False}
    _write(json.dumps({"jsonrpc": "2.0", "id": request_id, "result": result}).encode() + b"\n")


def _tool(request_id: Any, name: str, args: Any) -> None:
    if not isinstance(args, dict):  # arguments that are not an object (MCP asks for one), echoed
        _answer(request_id, json.dumps(args))
        return
    time.sleep(float(args.get("delay", 0)))
    if name == "emit":
        _write(bytes.fromhex(args["hex"]) * int(args.get("times", 1)) + b"\n")
        _answer(request_id, "emitted")
    elif name == "crash":
        sys.stderr.write("crashing\n")
        sys.stderr.flush()
        os._exit(int(args.get("status", 1)))
    elif name == "spawn":
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        _answer(request_id, str(child.pid))
    else:
        _answer(request_id, str(args.get("text", "")))


def _handle(message: dict[str, Any]) -> None:
    if "id" not in message:
        return
    if message.get("method") == "tools/call":
        params = message["params"]
        _tool(message["id"], params["name"], params.get("arguments") or {})
        return
    info = {"name": "raw", "version": "0"}
    result = {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}}, "serverInfo": info}
    _write(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}).encode() + b"\n")


def main() -> None:
    workers = []
    for line in sys.stdin.buffer:
        worker = threading.Thread(target=_handle, args=(json.loads(line),))
        worker.start()
        workers.append(worker)
    for worker in workers:
        worker.join()
    sys.exit(int(os.environ.get("RAW_EXIT_STATUS", "0")))


if __name__ == "__main__":
    main()
