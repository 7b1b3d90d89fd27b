"""The few JSON-RPC shapes the relay reads and writes. Only standard library."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

__all__ = [
    "BACKEND_GONE",
    "INTERNAL_ERROR",
    "INVALID_REQUEST",
    "PARSE_ERROR",
    "Incoming",
    "denial_result",
    "error_line",
    "parse_client_line",
    "response_ok",
    "tool_call",
]

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INTERNAL_ERROR = -32603
BACKEND_GONE = -32000
_MODERN_VERSION_KEY = "io.modelcontextprotocol/protocolVersion"


@dataclass(frozen=True, slots=True)
class Incoming:
    """A client line the relay understood: forward it unless ``error`` says why not."""

    message: dict[str, Any] | None
    error: bytes | None = None

    @property
    def method(self) -> str | None:
        return None if self.message is None else self.message.get("method")

    @property
    def has_id(self) -> bool:
        return self.message is not None and "id" in self.message


def parse_client_line(line: bytes) -> Incoming:
    """The message on ``line``, or the JSON-RPC error that answers a malformed one."""
    try:
        message = json.loads(line)
    except ValueError:
        return Incoming(None, error_line(None, PARSE_ERROR, "Parse error: the line is not JSON"))
    if isinstance(message, list):
        text = "Invalid Request: JSON-RPC batches are not supported by loopfuse proxy"
        return Incoming(None, error_line(None, INVALID_REQUEST, text))
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        text = "Invalid Request: not a JSON-RPC 2.0 message"
        return Incoming(None, error_line(_valid_id(message), INVALID_REQUEST, text))
    method = message.get("method")
    if method is None and "id" not in message:
        return Incoming(None, error_line(None, INVALID_REQUEST, "Invalid Request: no method and no id"))
    if method is not None and not isinstance(method, str):
        return Incoming(None, error_line(_valid_id(message), INVALID_REQUEST, "Invalid Request: bad method"))
    return Incoming(message)


def _valid_id(message: Any) -> Any:
    if not isinstance(message, dict):
        return None
    value = message.get("id")
    return value if isinstance(value, str | int) and not isinstance(value, bool) else None


def error_line(request_id: Any, code: int, text: str) -> bytes:
    """A JSON-RPC error response, as one line."""
    body = {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": text}}
    return _line(body)


def denial_result(request: dict[str, Any], text: str) -> bytes:
    """The ``tools/call`` response that refuses ``request``: an error tool result with ``text``."""
    result: dict[str, Any] = {"content": [{"type": "text", "text": text}], "isError": True}
    if _is_modern(request):
        result["resultType"] = "complete"
    return _line({"jsonrpc": "2.0", "id": request.get("id"), "result": result})


def _is_modern(request: dict[str, Any]) -> bool:
    """Whether the request speaks the 2026-07-28 wire (per-request protocol version)."""
    params = request.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    return isinstance(meta, dict) and _MODERN_VERSION_KEY in meta


def tool_call(message: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
    """The tool name and arguments of a ``tools/call``; None when they cannot be read."""
    params = message.get("params")
    if not isinstance(params, dict) or not isinstance(params.get("name"), str):
        return None
    args = params.get("arguments")
    if args is None:
        args = {}
    return (params["name"], args) if isinstance(args, dict) else None


def response_ok(message: dict[str, Any]) -> bool:
    """False for a JSON-RPC error or an error tool result."""
    result = message.get("result")
    return "error" not in message and not (isinstance(result, dict) and result.get("isError"))


def _line(body: dict[str, Any]) -> bytes:
    return json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode("utf-8") + b"\n"
