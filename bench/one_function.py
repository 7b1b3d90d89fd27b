"""The least a check with loopfuse's window can cost: one Python function, no breaker, no store.

A yardstick for ``bench/peers.py`` and ``bench/instructions.py``, not a guard: the same call key
(canonical JSON by orjson where the standard library would write the same bytes, sha256), one
agent's window of the last 200 keys as a ``bytearray`` searched in C, the agent table with its
idle clock, a lock around the agent's state and one around the counters, as a check of the
default guard does on a host that reports no results. What it leaves out is everything else a
``Guard`` does: other breakers, results, listeners, fail-open handling, configuration.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import orjson

WINDOW, LIMIT = 200, 7
_OPTIONS = orjson.OPT_SORT_KEYS | orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME
_MASK63 = (1 << 63) - 1


class _Agent:
    __slots__ = ("calls", "ring", "seen")

    def __init__(self) -> None:
        self.ring, self.calls, self.seen = bytearray(), 0, 0.0


def one_function_check() -> Callable[[str, dict[str, Any]], object]:
    """A check in one function: True when allowed, False when the window denies the call."""
    agents: OrderedDict[str, _Agent] = OrderedDict()
    heads: dict[str, bytes] = {}
    lock, counting = threading.Lock(), threading.Lock()
    counts = [0]

    def check(tool: str, args: dict[str, Any], agent: str = "agent") -> object:
        raw = orjson.dumps(args, option=_OPTIONS | orjson.OPT_PASSTHROUGH_SUBCLASS)
        if (
            raw.find(b"null") >= 0
            or (45 in raw and raw.find(b"e-") >= 0)
            or (46 in raw and raw.find(b"0.0000") >= 0)
        ):
            return None  # where loopfuse takes the standard library's path
        head = heads.get(tool)
        if head is None:
            head = heads[tool] = (tool + "\n").encode()
        digest = hashlib.sha256(head + raw).digest()
        entry = ((int.from_bytes(digest[:8], "big") & _MASK63) or 1).to_bytes(8)
        with lock:
            state = agents.get(agent)
            if state is None:
                state = agents[agent] = _Agent()
            else:
                agents.move_to_end(agent)
            state.seen = time.monotonic()
            ring, count = state.ring, 0
            at = ring.find(entry)
            while at >= 0:
                if at & 7:
                    at = ring.find(entry, at + 1)
                else:
                    count, at = count + 1, ring.find(entry, at + 8)
            if count >= LIMIT:
                return False
            if len(ring) < WINDOW << 3:
                ring += entry
            else:
                slot = (state.calls % WINDOW) << 3
                ring[slot : slot + 8] = entry
            state.calls += 1
        with counting:
            counts[0] += 1
        return True

    return check
