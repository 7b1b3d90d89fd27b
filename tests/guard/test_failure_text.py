"""Which texts a host called successes read as failures (``loopfuse._failure_text``)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from loopfuse._failure_text import answers_failure, json_text_fails, opens_as_failure, reads_as_failure
from loopfuse._untrusted import tool_result

FAILURES = [
    "FAILED tests/test_mod.py::test_parse - KeyError: 'x'\n1 failed, 11 passed in 0.41s",
    "Traceback (most recent call last):\n  File \"x.py\", line 1, in <module>\nKeyError: 'x'",
    "KeyError: 'x'",
    "[The command completed with exit code 1.]",
    "Exit code: 2\nWall time: 1s",
    '{"returncode": 1, "stdout": ""}',
    "Found 3 errors.",
    "10 failed, 2 passed",
    "--- FAIL: TestParse (0.00s)\nFAIL\tpkg\t0.01s",
    "npm ERR! code ELIFECYCLE",
    "FAILED (failures=1)",
    "error: could not compile `app`",
    "  2 failing",
    "Tests:       1 failed, 11 passed, 12 total",
    "BUILD FAILED in 3s",
    "fatal: not a git repository",
    '{"data":null,"error":"rate limited"}',
    "x" * 5000 + "\n1 failed, 11 passed",  # the verdict at the end of a long output
    "collected 12 items\n2 errors during collection",  # a count, not a numbered title
    "1..2\n# tests 2\n# pass 1\n# fail 1\n",  # TAP's summary (node --test, tape)
    "# Error\nThe page could not be built.",
    "Results:\n1. FAILED test_login\n2. FAILED test_logout",
    "## Errors: 3",
    "Exit code: 1\n" + "x" * 5000,  # or at its start
]
SUCCESSES = [
    "12 passed in 0.41s",
    "test result: ok. 12 passed; 0 failed; 0 ignored; 0 measured",
    "[The command completed with exit code 0.]",
    "Exit code: 0\nWall time: 1s",
    '{"returncode": 0, "stdout": "ok"}',
    "Success: no issues found in 3 source files",
    "Errors: 0, Warnings: 2",
    "no errors found",
    "tests/test_errors.py::test_error_handling PASSED",
    "Ran 12 tests in 0.01s\n\nOK",
    "  12 passing (40ms)",
    "Tests:       12 passed, 12 total",
    "File updated.",
    "ls\nerrors.py  main.py",
    '{"data":[1,2],"error":null}',  # a JSON result's empty error fields
    '{"errors":[],"failed":0,"is_error":false}',
    "",
    "x" * 2000 + "\n1 failed\n" + "y" * 2000,  # named only in the middle of a long output: unread
    "1. Rate limits - docs.acme.dev/api/rate-limits\n2. Errors - docs.acme.dev/api/errors",  # titles
    "# Errors\n\nEvery response carries a code.",
    "Results:\n 12. Errors and retries - docs/errors",
    "Search results:\n1. Quickstart\n2. Errors\n3. Rate limits",
    "1..2\n# tests 2\n# pass 2\n# fail 0\n",
]


# What common tools print, failing and passing (the verdict where they write it).
TOOL_FAILURES = [
    "== short test summary info ==\nFAILED tests/test_a.py::test_x - assert 1 == 2\n== 1 failed, 3 passed in 0.12s ==",
    "ERROR tests/test_a.py - ModuleNotFoundError: No module named 'x'\n=== 1 error in 0.10s ===",
    "Ran 3 tests in 0.001s\n\nFAILED (failures=1)",
    "FAIL  src/a.test.js\nTests:       1 failed, 2 passed, 3 total\nTime:        0.5 s",
    "--- FAIL: TestAdd (0.00s)\n    a_test.go:8: got 3, want 4\nFAIL\nexit status 1\nFAIL\texample.com/a\t0.002s",
    "test result: FAILED. 0 passed; 1 failed; 0 ignored; 0 measured\n\nerror: test failed, to rerun pass `--lib`",
    "src/a.py:3: error: Incompatible types in assignment  [assignment]\nFound 1 error in 1 file (checked 3 source files)",
    "src/a.py:1:8: F401 [*] `os` imported but unused\nFound 1 error.",
    "src/a.ts(3,7): error TS2322: Type 'string' is not assignable to type 'number'.\n\nFound 1 error in src/a.ts:3",
    "  1:7  error  'x' is assigned a value but never used  no-unused-vars\n\n1 problem (1 error, 0 warnings)",
    "a.c:3:5: error: 'x' undeclared (first use in this function)\nmake: *** [Makefile:2: a] Error 1",
    "/repo/a.js:3\n  x.foo();\n    ^\n\nTypeError: Cannot read properties of undefined\n"
    + "    at f (/repo/a.js:3:5)\n" * 30,
    "bash: pytset: command not found",
    "cat: missing.txt: No such file or directory",
    "thread 'main' panicked at src/main.rs:2:5:\nboom",
]
TOOL_SUCCESSES = [
    "....\n4 passed in 0.12s",
    "=== 10 passed, 2 xfailed, 1 warning in 0.50s ===",  # expected failures are a pass
    "tests/errors/test_x.py::test_raises_error PASSED\ntests/test_failures.py::test_y PASSED",
    "test_error_message (tests.test_a.T) ... ok\n\nRan 1 test in 0.001s\n\nOK",
    "PASS  src/a.test.js\nTests:       3 passed, 3 total\nSnapshots:   0 total",
    "PASS\nok  \texample.com/a\t0.002s",
    "test result: ok. 3 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out",
    "Success: no issues found in 3 source files",
    "  3 passing (10ms)",
    "Successfully installed requests-2.32.3",
    "nothing to commit, working tree clean",
    # a passing run naming a file, package, module or class called "error(s)"
    "PASS src/cart.test.ts\nPASS src/lib/error-handler.test.ts\n\nTests:       14 passed, 14 total",
    "ok  \tgithub.com/acme/shop/internal/cart\t0.011s\nok  \tgithub.com/acme/shop/internal/errors\t0.012s",
    "running 2 tests\ntest error::tests::parses_code ... ok\ntest cart::tests::adds ... ok\n\ntest result: ok.",
    "tests/test_api.py::TestErrors::test_404 PASSED\ntests/test_api.py::TestCart::test_add PASSED",
    "Command: ls\nDirectory: (root)\nStdout: a.txt\nStderr: (empty)\nError: (none)\nExit Code: 0",
]


@pytest.mark.parametrize(
    ("text", "failed"),
    [(text, True) for text in FAILURES + TOOL_FAILURES]
    + [(text, False) for text in SUCCESSES + TOOL_SUCCESSES],
)
def test_a_text_reads_as_a_failure_when_its_start_or_end_names_one(text: str, failed: bool) -> None:
    assert reads_as_failure(text) is failed


@given(st.text())
def test_any_text_is_read_without_raising(text: str) -> None:
    assert reads_as_failure(text) in (True, False)


@given(
    st.text(min_size=64, max_size=64),
    st.sampled_from(FAILURES[:6]),
    st.text(min_size=1, max_size=300),
    st.text(min_size=256, max_size=256),
)
def test_only_the_start_and_the_end_of_a_long_text_are_read(
    head: str, middle: str, other: str, tail: str
) -> None:
    assert reads_as_failure(head + middle + tail) == reads_as_failure(head + other + tail)


OPENERS = [
    "Error: service unavailable",
    "ERROR: No replacement was performed, old_str `x` did not appear verbatim in /repo/a.py.",
    "KeyError: 'x'",
    'Traceback (most recent call last):\n  File "a.py", line 1',
    "fatal: not a git repository (or any of the parent directories): .git",
    "Exit code: 1\nWall time: 0.4 seconds",
    "  Error: x",
    "Failed to fetch https://example.com: 404",
    "panic: runtime error: index out of range [3] with length 3",
    "ValueError",
    '{"error": "rate_limited", "retry_after": 30}',
    '{\n  "errors": [{"message": "Field \'x\' does not exist"}]\n}',
    '{"ok": false, "error": "channel_not_found"}',
    '{"success": false}',
    '{"isError": true, "content": [{"type": "text", "text": "boom"}]}',
    '{"status": "error", "message": "quota exceeded"}',
    "HTTP Error 503: Service Unavailable (attempt 3/20)",  # an HTTP client's failure, as text
    "HTTP/1.1 503 Service Unavailable\nRetry-After: 30",
    "503 Service Unavailable",
    "429 Too Many Requests",
    "404 Not Found: /api/v2/orders/17",
    "Status code: 502",
    "Request timed out after 30s",
    "Read timed out. (read timeout=10)",
    "Connection refused",
    "503 Server Error: Service Unavailable for url: https://api.example.com/v1/items",  # requests
    "404 Client Error: Not Found for url: https://api.example.com/v1/items/3",
    "Server error '503 Service Unavailable' for url 'https://api.example.com/v1'",  # httpx
    "503, message='Service Unavailable', url='https://api.example.com'",  # aiohttp
    "Request failed with status code 500",  # axios
    "HTTPSConnectionPool(host='api.example.com', port=443): Read timed out. (read timeout=5)",
    "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>",  # a proxy's error page
    "connect ECONNREFUSED 127.0.0.1:8080",
    "Response status: 503 Service Unavailable",
]
NOT_OPENERS = [
    "HTTP 500 errors: 0 in the last 5 minutes",  # statuses counted or named, not said
    "Status: 404 of 1000 pages crawled",
    "401 Unauthorized attempts blocked today: 12",
    "429 Too Many Requests - MDN Web Docs",
    "Connection refused on port 8080 (port closed, as expected)",
    "Connection refused: 0",
    "Timed out waiting for new messages (30s); queue empty",
    "http://404.example.com/ is reachable",
    "  450: gone = True",
    "HTTP/1.1 200 OK\nContent-Type: text/html",
    "Status code: 200",
    "404 results found for 'retry'",
    "200 Not Found pages were fixed",
    "Errors: 0",
    "Exit code: 0\nWall time: 0.4 seconds",
    "error_count = 3",
    "errors.py",
    "[File: /repo/a.py (569 lines total)]",
    "src/a.py:3:    raise ValueError('bad')",
    "class MyError(Exception):",
    "12 passed in 0.41s",
    "",
    "ERROR:root:database timeout",  # log lines, fetched by a log tool, are not its failures
    "ERROR 2024-12-03 07:50:45 db timeout",
    "Error rate: 0.5% over the last hour",
    '{"error": null, "data": [1, 2]}',  # JSON answers whose failure member holds nothing
    '{"errors": [], "warnings": ["unused import"]}',
    '{"error": ""}',
    '{"ok": true, "channel": "C1"}',
    '{"status": "done"}',
    '{"data": {"a": 1}, "error": "partial"}',  # the failure member after the start: not read
    '[{"error": "x"}]',
]


@pytest.mark.parametrize(
    ("text", "failed"), [(text, True) for text in OPENERS] + [(text, False) for text in NOT_OPENERS]
)
def test_an_answer_opens_as_a_failure_when_it_starts_with_a_verdict(text: str, failed: bool) -> None:
    assert opens_as_failure(text) is failed


DICT_ANSWERS = [
    ({"error": "not found"}, True),
    ({"data": [1], "errors": [{"message": "x"}]}, True),
    ({"ok": False, "channel": "C1"}, True),
    ({"success": False}, True),
    ({"isError": True, "content": []}, True),
    ({"status": "error"}, True),
    ({"error": None, "data": [1]}, False),
    ({"errors": [], "ok": True, "success": True, "isError": False, "status": "done"}, False),
    ({"ok": 0}, False),  # only false itself: a count named "ok" is no verdict
]


class Unequal:
    def __eq__(self, other: object) -> bool:
        raise RuntimeError("no comparison")

    __hash__ = None  # type: ignore[assignment]


@pytest.mark.parametrize(("answer", "failed"), DICT_ANSWERS)
def test_a_dict_answer_is_a_failure_when_an_api_would_mean_one(
    answer: dict[str, object], failed: bool
) -> None:
    assert answers_failure(answer) is failed


def test_a_dict_answers_values_are_judged_without_running_their_comparisons() -> None:
    assert answers_failure({"error": Unequal()}) is True  # an error member holding an object
    assert answers_failure({"status": LoudText("error"), "ok": Unequal()}) is False


ANSWERS = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20) | st.binary(max_size=20) | st.dates(),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.sampled_from(["error", "errors", "ok", "content", "type", "text", "x"]), inner, max_size=4
        )
    ),
    max_leaves=12,
)


@given(ANSWERS, st.sampled_from([True, False, None]))
def test_any_answer_is_read_without_raising_and_a_host_failure_stays_one(
    answer: object, ok: bool | None
) -> None:
    result = tool_result(answer, ok)
    assert result is not None  # every such value can be written and read
    assert result.ok is False or ok is not False


class LoudText(str):
    def __eq__(self, other: object) -> bool:
        raise RuntimeError("the caller's __eq__ ran")

    __hash__ = str.__hash__


def test_a_content_block_is_read_without_running_the_callers_comparisons() -> None:
    answer = [
        {"type": LoudText("text"), "text": "fine"},
        {"type": "text", "text": "Error: service unavailable"},
    ]
    result = tool_result(answer, None)
    assert result is not None and result.ok is False


JSON_TEXTS = [
    ('{"data": null, "errors": [{"message": "Field \'x\' does not exist"}]}', True),
    ('  {"id": 7, "ok": false, "error": "channel_not_found"}', True),
    ('{"data": {"a": 1}, "errors": []}', False),
    ('{"items": [{"title": "error in parser", "status": "error"}]}', False),  # a member of a member
    ('[{"error": "x"}]', False),
    ('{"data": 1, "error": "x"', False),  # not JSON
    ('{"pad": "' + "x" * 8_200 + '", "error": "x"}', False),  # past 8 KiB only the opening is read
]


@pytest.mark.parametrize(("text", "failed"), JSON_TEXTS)
def test_a_json_text_fails_by_any_top_level_member_up_to_8_kib(text: str, failed: bool) -> None:
    assert json_text_fails(text) is failed
