"""A SQL statement that changes a database is an edit: a failing test re-run after each batch of
rows fixed is honest work, on both stores (the 5th fix had been refused, by `stall`, since the
test's failure read the same with its count masked)."""

from __future__ import annotations

import pytest

from loopfuse import Guard
from loopfuse._calls import canonical_json
from loopfuse.breakers._rerun import writes_rows
from tests.store_fixtures import GuardFactory

from .conftest import run

TEST = {"command": "dbt test --select stg_orders"}
SOURCES = ["web", "ios", "android", "pos", "partner_api", "kiosk", "email", "batch"]


def _failing(rows: int) -> str:
    return (
        "Failure in test not_null_stg_orders_customer_id (models/staging/schema.yml)\n"
        f"  Got {rows} results, configured to fail if != 0\nDone. PASS=2 WARN=0 ERROR=1 SKIP=0 TOTAL=3"
    )


def _fixes_then_test(guard: Guard, statement: str) -> int:
    """A fix per source, each followed by the test failing on fewer rows; how many fixes ran."""
    run(guard, "bash", TEST, _failing(90), ok=False)
    for n, source in enumerate(SOURCES):
        fix = {"sql": statement.format(source=source)}
        if not (
            run(guard, "query", fix, "[]", ok=True)
            and run(guard, "bash", TEST, _failing(80 - 10 * n), ok=False)
        ):
            return n
    return len(SOURCES)


def test_a_failing_test_re_run_after_each_batch_of_rows_fixed_is_never_refused(
    make_guard: GuardFactory,
) -> None:
    fix = "UPDATE raw.orders o SET user_id = g.user_id FROM raw.guest_map g WHERE o.source = '{source}'"
    assert _fixes_then_test(make_guard(), fix) == len(SOURCES)


def test_a_query_that_reads_between_the_test_runs_brings_nothing_new(make_guard: GuardFactory) -> None:
    """Counting the bad rows per source changes nothing: the 5th such query is refused."""
    assert _fixes_then_test(make_guard(), "SELECT count(*) FROM raw.orders WHERE source = '{source}'") == 4


@pytest.mark.parametrize(
    ("args", "writes"),
    [
        ({"sql": "UPDATE raw.orders AS o SET x = 1"}, True),
        ({"query": "\n  INSERT INTO t (a) VALUES (1)"}, True),
        ({"query": "insert or replace into t values (1)"}, True),
        ({"statement": "DELETE FROM sessions WHERE expired"}, True),
        ({"sql": "CREATE UNIQUE INDEX idx ON t (a)"}, True),
        ({"sql": "create or replace materialized view v as select 1"}, True),
        ({"stmt": "TRUNCATE TABLE staging"}, True),
        ({"sql": "SELECT * FROM t WHERE note = 'UPDATE t SET a = 1'"}, False),
        ({"query": "update python to 3.12 on ubuntu"}, False),
        ({"query": "how to delete a row in postgres"}, False),
        ({"q": "UPDATE t SET a = 1"}, False),
    ],
)
def test_a_statement_that_changes_a_database_is_told_from_one_that_reads(
    args: dict[str, str], writes: bool
) -> None:
    assert writes_rows(canonical_json(args)) is writes
