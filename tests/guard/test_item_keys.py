"""One call per item is work: a value under a key naming an item (``id``, ``order_id``,
``docId``, ``uuid``, ``issue_number``, ``issueKey``, ``Key``, a notebook's ``cell_index``, the day
asked about: ``date``, ``departureDate``, a calendar's ``timeMin``) is not
masked in the near-duplicate key; a position (``page``, ``after_id``), a bookkeeping id
(``request_id``, ``client_request_id``, ``trace_id``) and every other number still are. Both stores."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from loopfuse.identity import _may_name_item, _names_day, _names_item
from tests.store_fixtures import GuardFactory

Args = Callable[[int], dict[str, Any]]


def first_denied(make_guard: GuardFactory, tool: str, args: Args, result: str, calls: int = 20) -> str | None:
    """Run ``calls`` calls of ``tool`` answered ``result`` (a success); the first denial's call
    number and rule, or None."""
    guard = make_guard()
    for n in range(1, calls + 1):
        decision = guard.check(tool, args(n), "a")
        if not decision.allowed:
            return f"{n} {decision.rule}"
        guard.record_result(tool, args(n), result, "a", ok=True)
    return None


def uuid(n: int) -> str:
    return f"{n:08x}-4b7d-4c1e-9a55-3e2f6d8b7c01"


WORK = [
    ("update_ticket", lambda n: {"ticket_id": 1000 + n, "status": "closed"}, "Ticket updated."),
    ("archive_document", lambda n: {"docId": uuid(n)}, "Archived."),
    ("get_order", lambda n: {"id": n}, "status: shipped"),
    ("delete_messages", lambda n: {"message_ids": [2 * n, 2 * n + 1]}, "Deleted."),
    ("set_label", lambda n: {"item": {"uuid": uuid(n)}, "label": "done"}, '{"ok": true}'),
    ("add_labels_to_issue", lambda n: {"owner": "acme", "issue_number": 300 + n}, '["bug", "triage"]'),
    ("get_issue", lambda n: {"issueKey": f"WEB-{300 + n}"}, "status: To Do"),
    ("move_email", lambda n: {"uid": 4000 + n, "folder": "Archive"}, "Moved."),
    ("delete_object", lambda n: {"Bucket": "logs", "Key": f"2026/11/{n:02d}.gz"}, "Deleted."),
    ("execute_cell", lambda n: {"cell_index": n}, "[]"),  # a notebook run top to bottom
    ("approve_pull_request", lambda n: {"pullRequestId": 700 + n}, "Approved."),
    ("merge", lambda n: {"project": "web", "merge_request_id": 40 + n}, "Merged."),
    # a day at a time, many days answered alike: each day is its own question
    (
        "list_events",
        lambda n: {"calendarId": "primary", "timeMin": f"2025-04-{n:02d}T00:00:00Z"},
        "No events.",
    ),
    ("search_flights", lambda n: {"origin": "SFO", "departureDate": f"2025-07-{n:02d}"}, '{"data": []}'),
    ("daily_sales", lambda n: {"store": "berlin", "date": f"2025-03-{n:02d}"}, "0 orders"),
]


@pytest.mark.parametrize(("tool", "args", "result"), WORK, ids=[w[0] for w in WORK])
def test_twenty_items_answered_alike_are_not_refused(
    make_guard: GuardFactory, tool: str, args: Args, result: str
) -> None:
    assert first_denied(make_guard, tool, args, result) is None


LOOPS = [
    ("search", lambda n: {"query": "retry", "page": 100 + n}, "No results."),
    ("list_items", lambda n: {"after_id": 5000 + n}, "No more items."),
    ("list_users", lambda n: {"sinceId": 5000 + n}, "[]"),
    ("get_job", lambda n: {"job_id": "j-17", "attempt": n}, '{"status": "running"}'),
    ("search", lambda n: {"query": "retry", "trace_id": uuid(n)}, "No results."),
    ("search", lambda n: {"query": "retry", "request_id": uuid(n)}, "No results."),
    ("search", lambda n: {"query": "retry", "client_request_id": uuid(n)}, "No results."),
    ("search", lambda n: {"query": "retry", "toolCallId": uuid(n)}, "No results."),
    ("read_pdf", lambda n: {"path": "a.pdf", "page_number": 100 + n}, "(blank page)"),
    ("deploy", lambda n: {"service": "api", "retry_number": 100 + n}, "Queued behind 3 deploys."),
    ("charge", lambda n: {"amount": 5, "idempotency_key": uuid(n)}, "Declined."),
    ("search", lambda n: {"query": "retry", "max_date": f"2025-03-{n:02d}"}, "No results."),
    ("save", lambda n: {"update": f"2025-03-{n:02d}", "state": n}, "Saved."),
]


@pytest.mark.parametrize(("tool", "args", "result"), LOOPS, ids=[f"{w[0]}-{i}" for i, w in enumerate(LOOPS)])
def test_calls_that_differ_in_a_position_or_a_bookkeeping_id_are_still_near_duplicates(
    make_guard: GuardFactory, tool: str, args: Args, result: str
) -> None:
    assert first_denied(make_guard, tool, args, result) == "10 near_duplicate.limit"


@pytest.mark.parametrize(
    ("key", "value", "day"),
    [
        ("date", "2025-03-12", True),
        ("start_date", "2025-03-12", True),
        ("departureDate", "2025-07-01", True),
        ("day", "2025-07-01", True),
        ("timeMin", "2025-04-19T00:00:00Z", True),
        ("time_max", "2025-04-20T00:00:00+02:00", True),
        ("Date", "2025-04-19 00:00", True),
        ("timeMin", "2025-04-19T09:41:07.123Z", False),  # "now": fresh on every attempt
        ("end_date", "2026-12-08T01:52:13Z", False),
        ("date", 20250312, False),
        ("update", "2025-03-12", False),
        ("today", "2025-03-12", False),
        ("max_date", "2025-03-12", False),
        ("minDate", "2025-03-12", False),
        ("days", "2025-03-12", False),
    ],
)
def test_which_keys_name_the_day_a_call_asks_about(key: str, value: Any, day: bool) -> None:
    assert _names_day(key, value) is day
    assert _may_name_item(json.dumps({key: value}, separators=(",", ":"))) or not day


def test_a_loop_asking_about_now_under_a_date_key_is_still_a_near_duplicate(make_guard: GuardFactory) -> None:
    """Each attempt's time of day under ``timeMin`` is new: kept, it made every call another."""

    def now(n: int) -> dict[str, Any]:
        return {"calendarId": "primary", "timeMin": f"2026-12-08T01:{n:02d}:07.123Z"}

    assert first_denied(make_guard, "list_events", now, "No events.") == "10 near_duplicate.limit"


@pytest.mark.parametrize(
    ("key", "item"),
    [
        ("id", True),
        ("ID", True),
        ("uuid", True),
        ("order_id", True),
        ("message_ids", True),
        ("docId", True),
        ("userID", True),
        ("itemIds", True),
        ("item_uuid", True),
        ("after_id", False),
        ("sinceId", False),
        ("max_id", False),
        ("previous_message_id", False),
        ("paid", False),
        ("valid", False),
        ("identity", False),
        ("guide", False),
        ("page", False),
        ("issue_number", True),
        ("uid", True),
        ("message_uids", True),
        ("pullNumber", True),
        ("issue_key", True),
        ("Key", True),
        ("sku", True),
        ("number", False),
        ("page_number", False),
        ("retryNumber", False),
        ("api_key", False),
        ("idempotencyKey", False),
        ("cell_index", True),
        ("cellIndex", True),
        ("index", False),
        ("row_index", False),
        ("client_request_id", False),
        ("tool_call_id", False),
        ("xRequestId", False),
        ("clientRequestId", False),
        ("parentSpanId", False),
        ("callId", True),  # a telephony or CRM call record
        ("call_id", True),
        ("recall_id", True),
        ("pull_request_id", True),
        ("pullRequestId", True),
        ("merge_request_id", True),
        ("service_request_id", True),
    ],
)
def test_which_keys_name_an_item(key: str, item: bool) -> None:
    assert _names_item(key) is item
    # the cheap test on the canonical text never misses a key that names an item
    assert _may_name_item(json.dumps({key: 1}, separators=(",", ":"))) or not item
