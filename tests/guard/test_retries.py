"""A call retried while it fails the same way, each error naming a fresh request id, on both stores."""

from __future__ import annotations

import random
import string

from tests.store_fixtures import GuardFactory

from .conftest import run


def _overloaded(rng: random.Random) -> str:
    token = "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(20))
    return f"Error code: 529 - {{'type': 'overloaded_error', 'request_id': 'req_011C{token}'}}"


def test_the_fifth_attempt_failing_alike_is_refused_whatever_request_id_it_names(
    make_guard: GuardFactory,
) -> None:
    """Each error read as new: the 9th attempt in a row was the first refused (progress_limit)."""
    guard, rng, args = make_guard(), random.Random(7), {"prompt": "summarize", "model": "m"}
    allowed = [run(guard, "call_llm", args, _overloaded(rng), ok=False) for _ in range(6)]
    assert allowed == [True] * 4 + [False, False]
    assert guard.check("call_llm", args, "a").rule == "same_error.identical_limit"
