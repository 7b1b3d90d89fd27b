"""A SQL statement that changes a database is an edit: a failing test re-run after each batch of
rows fixed is honest work, on both stores (the 5th fix had been refused, by `stall`, since the
test's failure read the same with its count masked)."""

from __future__ import annotations

import time

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
    ("tool", "args", "writes"),
    [
        ("query", {"sql": "UPDATE raw.orders AS o SET x = 1"}, True),
        ("run_query", {"query": "\n  INSERT INTO t (a) VALUES (1)"}, True),
        ("execute_sql", {"query": "insert or replace into t values (1)"}, True),
        ("db", {"statement": "DELETE FROM sessions WHERE expired"}, True),
        ("query", {"sql": "CREATE UNIQUE INDEX idx ON t (a)"}, True),
        ("query", {"sql": "create temporary table t (a int)"}, True),
        ("query", {"sql": "create or replace materialized view v as select 1"}, True),
        ("query", {"stmt": "TRUNCATE TABLE staging"}, True),
        ("query", {"sql": "SELECT * FROM t WHERE note = 'UPDATE t SET a = 1'"}, False),
        ("query", {"q": "UPDATE t SET a = 1"}, False),
        # a web search whose words are a statement's: no database runs it
        ("web_search", {"query": "create table postgres example"}, False),
        ("web_search", {"query": "drop table if exists mysql"}, False),
        ("search", {"query": "update node set version"}, False),
        ("query_docs", {"query": "create table t (x int)"}, False),  # a docs search
        ("feedback", {"query": "create table t (x int)"}, False),
        ("mcp__postgres__query", {"sql": "DELETE FROM t"}, True),
    ],
)
def test_a_statement_that_changes_a_database_is_told_from_one_that_reads(
    tool: str, args: dict[str, str], writes: bool
) -> None:
    assert writes_rows(canonical_json(args), tool) is writes


@pytest.mark.parametrize("opening", ["update", "update t", "create unique", "insert or", "UPDATE a b"])
def test_no_statement_makes_the_search_backtrack(opening: str) -> None:
    """A run of escaped newlines after "update" took 2.6 s at 512 and grew as their cube."""
    for filler in ("\n" * 8_000, " unique" * 2_000, ' \\"a' * 2_000):
        started = time.perf_counter()
        writes_rows(canonical_json({"sql": opening + filler}), "query")
        assert time.perf_counter() - started < 0.05
