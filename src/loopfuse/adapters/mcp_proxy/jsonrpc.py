"""The few JSON-RPC shapes the relay reads and writes. Only standard library."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from .streams import OVERSIZED_HEAD

__all__ = [
    "BACKEND_GONE",
    "INTERNAL_ERROR",
    "INVALID_REQUEST",
    "PARSE_ERROR",
    "Incoming",
    "denial_result",
    "error_line",
    "is_message",
    "parse_client_line",
    "parse_line",
    "recover_id",
    "response_ok",
    "tool_call",
    "with_warning",
]

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INTERNAL_ERROR = -32603
BACKEND_GONE = -32000
_MODERN_VERSION_KEY = "io.modelcontextprotocol/protocolVersion"


@dataclass(frozen=True, slots=True)
class Incoming:
    """A client line the relay read: forward ``message`` if set, else answer ``error`` if
    set, else drop the line (a parse error without an id to answer to)."""

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
        message = parse_line(line)
    except (ValueError, RecursionError) as exc:
        request_id = recover_id(line)
        if request_id is None:
            return Incoming(None)
        why = "is nested too deeply" if isinstance(exc, RecursionError) else "is not JSON"
        return Incoming(None, error_line(request_id, PARSE_ERROR, f"Parse error: the line {why}"))
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


def parse_line(line: bytes) -> Any:
    """The JSON value on ``line``; raises ValueError (also for bad UTF-8) or RecursionError."""
    return json.loads(line)


def is_message(value: Any) -> bool:
    """Whether a value the server wrote is a JSON-RPC 2.0 message (or a batch of them): a
    request or notification names a method, a response an id and a result or error. A
    structured log line (``{"level": 30, "msg": ...}``, even with an ``id``) is not."""
    if isinstance(value, list):
        return bool(value) and all(isinstance(item, dict) and is_message(item) for item in value)
    if not isinstance(value, dict) or value.get("jsonrpc") != "2.0":
        return False
    if isinstance(value.get("method"), str):
        return True
    return "id" in value and ("result" in value or "error" in value)


_COLON = re.compile(r"\s*:\s*")
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\]:,]', re.DOTALL)


def recover_id(line: bytes) -> str | int | None:
    """The ``id`` member of the top-level object on a line that does not parse, if readable
    in its first ``OVERSIZED_HEAD`` bytes (the scan runs on the event loop: bounded)."""
    text = line[:OVERSIZED_HEAD].decode("utf-8", "replace")
    depth, previous = 0, ""
    for match in _TOKEN.finditer(text):
        token = match.group()
        if depth == 0 and token != "{":
            return None
        if depth == 1 and token == '"id"' and previous in ("{", ","):
            return _id_after(text, match.end())
        if len(token) == 1:
            depth += (token in "{[") - (token in "}]")
        if depth == 1:
            previous = token
    return None


def _id_after(text: str, position: int) -> str | int | None:
    """The string or integer after the colon at ``position`` (after optional spaces)."""
    colon = _COLON.match(text, position)
    if colon is None:
        return None
    try:
        value, _ = json.JSONDecoder().raw_decode(text, colon.end())
    except ValueError:
        return None
    return _valid_id({"id": value})


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


def tool_call(message: dict[str, Any]) -> tuple[str, Any] | None:
    """The tool name and arguments of a ``tools/call``; None when its name cannot be read.
    Arguments that are not an object (MCP asks for one) are checked as they are: a server that
    takes them runs the call."""
    params = message.get("params")
    if not isinstance(params, dict) or not isinstance(params.get("name"), str):
        return None
    args = params.get("arguments")
    return params["name"], {} if args is None else args


def next_round(message: dict[str, Any]) -> bool:
    """Whether a ``tools/call`` is a later round of a 2026-07-28 call: the client answering the
    tool's request for input (``inputResponses``, not empty: a tool asks something), or retrying
    with the state it was given (``requestState``, a string). A null or an empty object is no
    round, so the call is checked, as ``LoopfuseMiddleware`` does."""
    params = message.get("params")
    if not isinstance(params, dict):
        return False
    responses = params.get("inputResponses")
    return isinstance(params.get("requestState"), str) or (isinstance(responses, dict) and bool(responses))


def input_required(message: dict[str, Any]) -> bool:
    """Whether an answer asks for another round of its call instead of ending it."""
    result = message.get("result")
    return isinstance(result, dict) and result.get("resultType") == "input_required"


def response_ok(message: dict[str, Any]) -> bool:
    """False for a JSON-RPC error or an error tool result."""
    result = message.get("result")
    return "error" not in message and not (isinstance(result, dict) and result.get("isError"))


def with_warning(message: dict[str, Any], warning: str) -> bytes | None:
    """The ``tools/call`` answer ``message`` with one more text content block, the warning, at
    the end of its result's content; None when it has no such content (an error, say)."""
    result = message.get("result")
    if not isinstance(result, dict) or not isinstance(result.get("content"), list):
        return None
    content = result["content"]
    try:
        return _dumps(
            {**message, "result": {**result, "content": [*content, {"type": "text", "text": warning}]}}
        )
    except ValueError:  # a number JSON cannot hold (NaN, Infinity), as the server wrote it
        return None


def _line(body: dict[str, Any]) -> bytes:
    """``body`` as one line of valid JSON; an id JSON cannot hold (``1e400`` read as infinity)
    is written as null."""
    try:
        return _dumps(body)
    except ValueError:
        return _dumps({**body, "id": None})


def _dumps(body: dict[str, Any]) -> bytes:
    return json.dumps(body, separators=(",", ":"), allow_nan=False).encode("ascii") + b"\n"
