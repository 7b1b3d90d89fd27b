"""record_result: result-aware counting in the window breaker and the loop brake, on both stores."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from loopfuse import Guard
from loopfuse._calls import CallKey
from tests.store_fixtures import GuardFactory

from .conftest import ONLY_NEW, run


def test_without_results_the_seventh_identical_call_is_denied(make_guard: GuardFactory) -> None:
    guard = make_guard()
    assert [guard.check("bash", {"command": "ls"}, "a").allowed for _ in range(8)] == [True] * 6 + [
        False,
        False,
    ]


def test_identical_call_with_identical_result_keeps_counting(make_guard: GuardFactory) -> None:
    guard = make_guard({"circuit_breaker": {"same_result_limit": 0, "result_limit": 0}})
    allowed = [run(guard, "bash", {"command": "pytest"}, "1 failed") for _ in range(8)]
    assert allowed == [True] * 6 + [False, False]


def test_test_rerun_with_edits_and_new_results_is_never_denied(make_guard: GuardFactory) -> None:
    guard = make_guard()
    for i in range(17):
        assert run(guard, "edit", {"line": i, "text": f"fix {i}"}, f"edited line {i}")
        assert run(guard, "bash", {"command": "python reproduce.py"}, f"{17 - i} failed")


def test_paging_with_new_output_passes_until_progress_limit(make_guard: GuardFactory) -> None:
    guard = make_guard()
    allowed = [run(guard, "scroll_down", {}, f"lines {100 * i}-{100 * i + 99}") for i in range(10)]
    assert allowed == [True] * 8 + [False, False]
    decision = guard.check("scroll_down", {}, "a")
    assert (decision.kind, decision.count, decision.limit) == ("duplicate", 8, 8)


def test_same_result_in_a_row_is_denied_after_same_result_limit(make_guard: GuardFactory) -> None:
    guard = make_guard()
    allowed = [run(guard, "goto", {"line": 72}, "same screen") for _ in range(7)]
    assert allowed == [True] * 5 + [False, False]


STAMPS = {  # the answer's own time, one second later on each poll
    "ISO 8601": lambda t: f"2024-12-03T07:50:{t:02d}Z",
    "Unix seconds": lambda t: f"{1733212200 + t}",
    "Unix seconds with a fraction": lambda t: f"{1733212200 + t}.{t * 7919:06d}",
    "Unix milliseconds": lambda t: f"{1733212200123 + 1000 * t}",
}


@pytest.mark.parametrize("stamp", STAMPS.values(), ids=list(STAMPS))
def test_a_poll_answered_alike_but_for_its_time_is_the_same_result(
    make_guard: GuardFactory, stamp: Callable[[int], str]
) -> None:
    guard = make_guard()
    answers = [f'{{"job": "build-7", "status": "pending", "checked_at": {stamp(t)!r}}}' for t in range(7)]
    assert [run(guard, "job_status", {"job": "build-7"}, a) for a in answers] == [True] * 5 + [False, False]


TEMP_NAMES = ["tmpk3j_x9a2", "tmp8_zzq1ab", "tmp_0q2wxyz", "tmpz9y8x7w6", "tmpa1b2c3d_", "tmp5hj_k2lm"]


def test_one_script_failing_alike_from_a_new_temporary_file_is_the_same_error(
    make_guard: GuardFactory,
) -> None:
    guard, code = make_guard(), {"code": "print(x)"}
    tracebacks = [
        f"File \"/tmp/{name}.py\", line 1\nNameError: name 'x' is not defined" for name in TEMP_NAMES
    ]
    assert [run(guard, "run_code", code, t, ok=False) for t in tracebacks] == [True] * 4 + [False, False]
    assert guard.check("run_code", code, "a").rule == "same_error.identical_limit"


@pytest.mark.parametrize("value", ["0.17332122{t:02d}", "173321220{t:02d}"], ids=["fraction", "11 digits"])
def test_a_long_number_that_changes_is_still_a_new_result(make_guard: GuardFactory, value: str) -> None:
    guard = make_guard()
    answers = [f"loss {value.format(t=t)}" for t in range(8)]
    assert all(run(guard, "train_step", {"epochs": 1}, a) for a in answers)


def test_result_limit_applies_to_interleaved_identical_pairs(make_guard: GuardFactory) -> None:
    guard = make_guard()
    outcomes = []
    for i in range(9):
        run(guard, "edit", {"n": i}, "ok")
        outcomes.append(run(guard, "bash", {"command": "make"}, "error 1"))
    assert outcomes == [True] * 7 + [False, False]


def test_result_limit_applies_to_an_interleaved_identical_failure(make_guard: GuardFactory) -> None:
    guard = make_guard()
    outcomes = []
    for i in range(9):
        run(guard, "edit", {"n": i}, f"edited line {i}")
        outcomes.append(run(guard, "bash", {"command": "make"}, "error 1", ok=False))
    assert outcomes == [True] * 7 + [False, False]
    decision = guard.check("bash", {"command": "make"}, "a")
    assert (decision.rule, decision.count, decision.limit) == ("circuit_breaker.result_limit", 7, 7)


def test_a_passing_rerun_after_each_edit_is_never_denied(make_guard: GuardFactory) -> None:
    guard = make_guard()
    for i in range(60):
        assert run(guard, "edit", {"n": i}, f"edited line {i}")
        assert run(guard, "bash", {"command": "pytest -q"}, "12 passed", ok=True)


def test_a_rerun_not_reported_as_a_success_counts_after_edits(make_guard: GuardFactory) -> None:
    guard = make_guard()  # ok not given: it could be the same failure again
    outcomes = []
    for i in range(9):
        run(guard, "edit", {"n": i}, f"edited line {i}")
        outcomes.append(run(guard, "bash", {"command": "pytest -q"}, "12 passed"))
    assert outcomes == [True] * 7 + [False, False]


FAILING = "FAILED tests/test_mod.py::test_parse - KeyError: 'x'\n1 failed, 11 passed in 0.41s"


def test_a_success_reading_as_a_failure_counts_after_edits(make_guard: GuardFactory) -> None:
    guard = make_guard()  # a host that calls every returned text a success: the same failure again
    outcomes = []
    for i in range(9):
        run(guard, "edit", {"n": i}, f"edited line {i}")
        outcomes.append(run(guard, "bash", {"command": "pytest -q"}, FAILING, ok=True))
    assert outcomes == [True] * 7 + [False, False]
    decision = guard.check("bash", {"command": "pytest -q"}, "a")
    assert (decision.rule, decision.count, decision.limit) == ("circuit_breaker.result_limit", 7, 7)


def test_a_wrapped_test_tool_failing_the_same_way_after_each_edit_is_refused(
    make_guard: GuardFactory,
) -> None:
    guard = make_guard()
    edit = guard.wrap(lambda path, text: f"The file {path} has been edited: {text}", tool="str_replace")
    test = guard.wrap(lambda: FAILING, tool="run_tests")
    outcomes = []
    for i in range(9):
        edit("mod.py", f"x = compute_{chr(97 + i)}()")
        outcomes.append(test())
    refused = [text for text in outcomes if text != FAILING]
    assert len(refused) == 2 and outcomes[:7] == [FAILING] * 7
    assert "result_limit" in refused[0] and "KeyError" not in refused[0]


ERROR_ANSWERS = {
    "text": "Error: service unavailable",
    "HTTP text": "HTTP Error 503: Service Unavailable",
    "JSON text": '{"error": {"code": 503, "message": "service unavailable"}}',
    "dict": {"ok": False, "error": "service_unavailable"},
    "MCP answer": {"content": [{"type": "text", "text": "Error: service unavailable"}], "isError": False},
    "content blocks": [{"type": "text", "text": "Error: service unavailable"}],
    "one block": {"type": "text", "text": "Error: service unavailable"},
    "GraphQL text": '{"data": null, "errors": [{"message": "service unavailable"}]}',
}


@pytest.mark.parametrize("ok", [True, None])
@pytest.mark.parametrize("answer", ERROR_ANSWERS.values(), ids=list(ERROR_ANSWERS))
def test_an_answer_opening_with_an_error_is_a_failure_whatever_the_host_says(
    make_guard: GuardFactory, ok: bool | None, answer: object
) -> None:
    guard = make_guard()  # a tool that answers its errors as text: new arguments, the same error
    outcomes = [run(guard, "search", {"q": f"flights {chr(97 + i)}"}, answer, ok=ok) for i in range(12)]
    assert outcomes == [True] * 10 + [False, False]
    decision = guard.check("search", {"q": "flights z"}, "a")
    assert (decision.rule, decision.count, decision.limit) == ("same_error.limit", 10, 10)


def test_an_answer_naming_an_error_after_its_start_is_no_failure(make_guard: GuardFactory) -> None:
    guard = make_guard()  # grep lines that name errors: 20 in a row would trip `failures` (15)
    for i in range(20):
        line = f"src/m{chr(97 + i)}.py:3:    raise ValueError('bad {chr(97 + i)}')"
        assert run(guard, "grep", {"pattern": f"raise.*{chr(97 + i)}"}, line, ok=True)


class _Hostile(str):
    """A string result whose own methods raise: the guard reads the text itself."""

    def _raise(self, *_: object, **__: object) -> None:
        raise RuntimeError("read me as a str")

    lower = encode = isascii = __len__ = __getitem__ = _raise  # type: ignore[assignment]


def test_a_string_result_whose_methods_raise_is_read_as_its_text(make_guard: GuardFactory) -> None:
    guard = make_guard()
    outcomes = []
    for i in range(9):
        run(guard, "edit", {"n": i}, f"edited line {i}")
        outcomes.append(run(guard, "bash", {"command": "pytest -q"}, _Hostile(FAILING), ok=True))
    assert outcomes == [True] * 7 + [False, False]
    assert guard.stats()["fail_open"] == {}


MODULES = ("cli", "loader", "schema", "defaults", "env", "paths", "plugins", "cache", "errors", "merge")


def _search_after_each(
    guard: Guard,
    read: Callable[[int], tuple[dict[str, str], str]],
    ok: bool | None,
    hits: str = "src/config.py:12",
) -> list[bool]:
    """The same search, answered alike, after each of 10 reads; whether each search was allowed."""
    outcomes = []
    for i in range(10):
        args, text = read(i)
        assert run(guard, "read_file", args, text, ok=ok)
        outcomes.append(run(guard, "search", {"q": "parse_config"}, hits, ok=ok))
    return outcomes


def test_a_search_re_run_after_each_new_finding_is_never_denied(make_guard: GuardFactory) -> None:
    outcomes = _search_after_each(
        make_guard(), lambda i: ({"path": f"src/{MODULES[i]}.py"}, MODULES[i]), True
    )
    assert outcomes == [True] * 10


def test_a_search_hit_titled_errors_is_no_failure(make_guard: GuardFactory) -> None:
    """A docs search listing the "Errors" page read as a failure: no new finding excused it."""
    hits = "1. Rate limits - docs.acme.dev/api/rate-limits\n2. Errors - docs.acme.dev/api/errors"
    read = lambda i: ({"path": f"src/{MODULES[i]}.py"}, MODULES[i])  # noqa: E731
    assert _search_after_each(make_guard(), read, True, hits) == [True] * 10


def test_a_re_run_after_new_findings_counts_when_no_success_is_reported(make_guard: GuardFactory) -> None:
    outcomes = _search_after_each(
        make_guard(), lambda i: ({"path": f"src/{MODULES[i]}.py"}, MODULES[i]), None
    )
    assert outcomes == [True] * 7 + [False] * 3  # result_limit 7


def test_a_re_run_after_calls_new_only_by_a_number_counts(make_guard: GuardFactory) -> None:
    outcomes = _search_after_each(make_guard(), lambda i: ({"path": f"src/m{i}.py"}, f"module {i}"), True)
    # near_duplicate limit 8: to it src/m0.py to src/m9.py are one call, new only the first time
    assert outcomes == [True] * 9 + [False]


def test_a_re_run_after_a_call_that_failed_counts(make_guard: GuardFactory) -> None:
    guard = make_guard({"stall": {"enabled": False}, "same_error": {"enabled": False}})
    outcomes = []
    for i in range(9):
        run(guard, "read_file", {"path": f"src/{MODULES[i]}.py"}, "No such file", ok=False)
        outcomes.append(run(guard, "search", {"q": "parse_config"}, "src/config.py:12", ok=True))
    assert outcomes == [True] * 7 + [False, False]


def test_a_passing_rerun_with_nothing_new_since_still_counts(make_guard: GuardFactory) -> None:
    guard = make_guard({"circuit_breaker": {"same_result_limit": 0, "progress_limit": 0}})
    assert run(guard, "edit", {"n": 0}, "edited line 0")
    assert [run(guard, "bash", {"command": "pytest -q"}, "12 passed") for _ in range(8)] == [True] * 7 + [
        False
    ]


def _edit_then_test(guard: Guard, edit_tool: str, rounds: int, failing: bool = False) -> int:
    """Rounds of an edit answered "File updated." and a test run; how many passed unrefused."""
    for n in range(rounds):
        edit = {"path": "app.py", "content": f"def f(): return {chr(97 + n % 26)}{chr(97 + n // 26)}"}
        text, ok = (f"{rounds - n} failed", False) if failing else ("12 passed", True)
        if not (run(guard, edit_tool, edit, "File updated.") and run(guard, "pytest", {}, text, ok=ok)):
            return n
    return rounds


@pytest.mark.parametrize("failing", [False, True])
def test_an_edit_tool_with_a_fixed_answer_still_brings_something_new(
    make_guard: GuardFactory, failing: bool
) -> None:
    assert _edit_then_test(make_guard(), "write_file", 30, failing) == 30


@pytest.mark.parametrize(("failing", "rounds"), [(False, 7), (True, 4)])  # result_limit; stall error_limit
def test_a_tool_not_named_an_edit_tool_brings_nothing_new_with_a_fixed_answer(
    make_guard: GuardFactory, failing: bool, rounds: int
) -> None:
    assert _edit_then_test(make_guard(), "update_file", 30, failing) == rounds


@pytest.mark.parametrize(
    "edit_tool",
    ["replace", "replace_in_file", "apply_diff", "mcp__filesystem__write_file", "overwrite_cell_source"],
)
def test_other_agents_edit_tools_and_an_mcp_servers_bring_something_new(
    make_guard: GuardFactory, edit_tool: str
) -> None:
    """Gemini CLI's, Cline's and Roo Code's edit tools, the MCP filesystem server's as Claude
    Code names it, and the Jupyter MCP server's were no edit tools: the 8th passing test run
    after 8 edits was refused."""
    assert _edit_then_test(make_guard(), edit_tool, 30) == 30


def test_stall_edit_tools_names_the_edit_tools(make_guard: GuardFactory) -> None:
    guard = make_guard({"stall": {"edit_tools": ["update_file"]}})
    assert _edit_then_test(guard, "update_file", 30) == 30


def test_result_is_never_stored() -> None:
    guard = Guard()
    secret = "canary-secret-value-0xdeadbeef"
    run(guard, "bash", {"command": "cat"}, secret)
    state = guard._store._agents.get("a")  # type: ignore[attr-defined]
    key = CallKey.of("bash", {"command": "cat"})
    assert key is not None and state.results.last.get(key.key) is not None
    assert not any(secret[:12] in text for text in _strings_in(state))


def _strings_in(obj: object, depth: int = 0) -> list[str]:
    """Every string and bytes value reachable from ``obj`` through slots and containers."""
    if depth > 6:
        return []
    if isinstance(obj, str | bytes):
        return [obj if isinstance(obj, str) else obj.decode("latin-1")]
    if isinstance(obj, dict):
        items: list[object] = [*obj.keys(), *obj.values()]
    elif isinstance(obj, list | tuple | set | frozenset):
        items = list(obj)
    else:
        names = [n for cls in type(obj).__mro__ for n in getattr(cls, "__slots__", ())]
        items = [getattr(obj, n, None) for n in names if n != "__weakref__"]
    return [s for item in items for s in _strings_in(item, depth + 1)]


def test_unserializable_result_fails_open(make_guard: GuardFactory) -> None:
    guard = make_guard()
    run(guard, "bash", {"command": "ls"}, object())
    run(guard, "bash", {"command": "ls"}, {1j: 2})
    assert guard.stats()["fail_open"].get("result", 0) >= 1


def test_result_aware_loop_brake_resets_on_new_result(make_guard: GuardFactory) -> None:
    guard = make_guard({"loop_brake": {"max_repeats": 3, "result_aware": True}})
    assert all(run(guard, "scroll_down", {}, f"page {i}") for i in range(6))
    assert [run(guard, "goto", {"line": 1}, "same") for _ in range(4)] == [True] * 3 + [False]


def test_plain_loop_brake_ignores_results(make_guard: GuardFactory) -> None:
    guard = make_guard({"loop_brake": {"max_repeats": 3}})
    assert [run(guard, "scroll_down", {}, f"page {i}") for i in range(4)] == [True] * 3 + [False]


def _report_whatever_came_back(guard: Guard, tool: str, args: dict[str, str], output: str) -> bool:
    """A host that reports each step's text, the denial text included, as the result."""
    decision = guard.check(tool, args, "a")
    guard.record_result(tool, args, output if decision.allowed else decision.message, "a")
    return decision.allowed


def test_reporting_a_denial_as_a_result_never_re_allows_the_call(make_guard: GuardFactory) -> None:
    for config in ({}, {"loop_brake": {"max_repeats": 3, "result_aware": True}}):
        guard = make_guard(config)
        allowed = [
            _report_whatever_came_back(guard, "goto", {"line": "72"}, "same screen") for _ in range(12)
        ]
        first_denied = allowed.index(False)
        assert allowed[first_denied:] == [False] * (12 - first_denied), config


def test_a_result_reported_twice_counts_once(make_guard: GuardFactory) -> None:
    guard = make_guard({"circuit_breaker": {"same_result_limit": 3}, **ONLY_NEW})
    args = {"command": "goto 72"}
    for _ in range(3):
        assert guard.check("goto", args, "a").allowed
        guard.record_result("goto", args, "same", "a")
        guard.record_result("goto", args, "other", "a")  # a second report of the same call: ignored
    assert not guard.check("goto", args, "a").allowed


def test_a_tool_that_changes_its_arguments_gets_its_result_counted(make_guard: GuardFactory) -> None:
    guard = make_guard({"circuit_breaker": {"same_result_limit": 3}, **ONLY_NEW})
    guard.record_result("warmup", {}, "", "a")  # the guard now receives results
    allowed = []
    for _ in range(5):
        args = {"command": "goto 72"}
        allowed.append(guard.check("goto", args, "a").allowed)
        args["cursor"] = "changed by the tool"  # mutated in place while the call ran
        guard.record_result("goto", args, "same", "a")
    assert allowed == [True, True, True, False, False]


def test_error_keyword_reports_a_failure(make_guard: GuardFactory) -> None:
    guard = make_guard(
        {"same_error": {"limit": 3, "identical_limit": 0}, "circuit_breaker": {"enabled": False}}
    )
    for n in range(3):
        args = {"path": f"missing-{n}.txt"}
        assert guard.check("read", args, "a").allowed
        guard.record_result(tool="read", args=args, agent="a", error=FileNotFoundError("no such file"))
    assert guard.check("read", {"path": "other.txt"}, "a").kind == "same_error"


def test_an_exception_as_the_result_is_an_error(make_guard: GuardFactory) -> None:
    guard = make_guard(
        {"same_error": {"limit": 3, "identical_limit": 0}, "circuit_breaker": {"enabled": False}}
    )
    for n in range(3):
        args = {"path": f"missing-{n}.txt"}
        assert guard.check("read", args, "a").allowed
        guard.record_result("read", args, FileNotFoundError("no such file"), "a")
    assert guard.check("read", {"path": "other.txt"}, "a").kind == "same_error"
    assert guard.stats()["fail_open"] == {}


def test_an_exception_whose_text_cannot_be_read_is_still_an_error(make_guard: GuardFactory) -> None:
    class Unprintable(Exception):
        def __str__(self) -> str:
            raise RuntimeError("no text")

    guard = make_guard(
        {"same_error": {"limit": 2, "identical_limit": 0}, "circuit_breaker": {"enabled": False}}
    )
    for n in range(2):
        assert guard.check("read", {"n": n}, "a").allowed
        guard.record_result("read", {"n": n}, error=Unprintable(), agent="a")
    assert guard.check("read", {"n": 9}, "a").kind == "same_error"


JEST = "PASS src/cart.test.ts\nPASS src/lib/error-handler.test.ts\n\nTests:       14 passed, 14 total\n"
GO = "ok  \tgithub.com/acme/shop/internal/cart\t0.011s\nok  \tgithub.com/acme/shop/internal/errors\t0.012s\n"


@pytest.mark.parametrize("passing", [JEST, GO])
def test_a_passing_run_naming_an_errors_module_is_rerun_after_each_edit(
    make_guard: GuardFactory, passing: str
) -> None:
    """The same passing output after each edit named a file or package "error(s)", so it read as a
    failure, which no edit excuses: the 8th run was refused."""
    guard = make_guard()
    for n in range(20):
        edit = {"file_path": "src/cart.ts", "old_string": "total" + "x" * n, "new_string": "total" + "y" * n}
        assert run(guard, "Edit", edit, "The file src/cart.ts has been updated.", ok=True)
        assert run(guard, "Bash", {"command": "npm test"}, passing, ok=True), n
