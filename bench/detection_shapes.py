"""The loop shapes the detection issue saw on agents outside our corpora, built as runs.

    PYTHONPATH=src python bench/detection_shapes.py

The issue describes loops the defaults missed on recorded runs we do not have (other
SWE-agent versions, OpenHands, tool-calling customer-service agents). Each shape here is
one run written from that description, with results as those tools print them. It prints,
per shape, where the default guard and each anchor rule first deny (the call's number,
from 1), against the call the loop starts at. Figures, not a score: the shapes are ours.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable

from loopfuse import Guard
from loopfuse.analysis.evaluation import anchors, guard_detector
from loopfuse.analysis.transcripts.model import ToolCall

Step = tuple[str, dict[str, object], str, bool | None]
LINT = (
    "Your proposed edit has introduced new syntax error(s). Please understand the fixes and retry "
    "your edit command.\n\nERRORS:\n- E999 IndentationError: unexpected indent\n\nThis is how your "
    "edit would have looked if applied\n"
)
BODIES = (
    "        if value is None:\n        return default",
    "    if value is None:\n            return default",
)
SEARCH = json.dumps(
    [{"flight": "HAT170", "status": "available"}, {"flight": "HAT022", "status": "available"}]
)


def edit(lines: str, body: str) -> dict[str, object]:
    return {"command": f"edit {lines}\n{body}\nend_of_edit"}


def rejected(lines: str, body: str, *, echo: bool = True) -> Step:
    """An edit rejected by the linter, its error echoing the edit as SWE-agent's does (or not)."""
    numbered = "\n".join(f"{120 + n}:{line}" for n, line in enumerate(body.split("\n")))
    return ("edit", edit(lines, body), LINT + numbered if echo else LINT, False)


def identical_then_variant() -> tuple[list[Step], int]:
    steps = [rejected("120:121", BODIES[0]) for _ in range(4)]
    return [
        *steps,
        rejected("120:122", BODIES[0]),
        ("edit", edit("120:121", "    pass"), "File updated.", None),
    ], 1


def alternating(times: int, *, echo: bool = True) -> tuple[list[Step], int]:
    steps = [rejected("120:121", BODIES[n % 2], echo=echo) for n in range(times)]
    return [*steps, ("submit", {}, "diff --git a/mod.py b/mod.py", None)], 1


def flight_change(error: Callable[[str], str]) -> tuple[list[Step], int]:
    """The same change submitted 5 times in two variants, each refused, a search between."""
    steps: list[Step] = [
        ("get_reservation_details", {"reservation_id": "ZFA04Y"}, '{"flights": ["HAT036"]}', None)
    ]
    for n in range(5):
        flight = ("HAT170", "HAT022")[n % 2]
        args: dict[str, object] = {
            "reservation_id": "ZFA04Y",
            "flights": [{"flight_number": flight, "date": "2024-05-22"}],
        }
        steps.append(("update_reservation_flights", args, error(flight), False))
        steps.append(("search_direct_flight", {"origin": "JFK", "destination": "SEA"}, SEARCH, None))
    return steps, 2


def str_replace_variants() -> tuple[list[Step], int]:
    olds = (
        "    return self._value",
        "        return self._value",
        "return self._value",
        "\treturn self._value",
    )
    steps: list[Step] = []
    for old in olds * 2:
        args: dict[str, object] = {
            "command": "str_replace",
            "path": "/repo/mod.py",
            "old_str": old,
            "new_str": "    return self.value",
        }
        error = f"No replacement was performed, old_str `{old}` did not appear verbatim in /repo/mod.py."
        steps.append(("str_replace_editor", args, error, False))
    return steps, 1


def view_back(times: int) -> tuple[list[Step], int]:
    steps: list[Step] = []
    for n in range(times):
        first = 600 - 10 * n
        args: dict[str, object] = {
            "command": "view",
            "path": "/repo/mod.py",
            "view_range": [first, first + 10],
        }
        steps.append(
            ("str_replace_editor", args, "\n".join(f"{k}\tcode {k}" for k in range(first, first + 11)), None)
        )
    return steps, 4


def tests_after_edits(rounds: int, edited: Callable[[int], str], tested: Callable[[int], Step]) -> list[Step]:
    """An edit, then the tests, ``rounds`` times: the edit's result is ``edited(n)``."""
    steps: list[Step] = []
    for n in range(rounds):
        args: dict[str, object] = {"path": "/repo/mod.py", "old_str": _named(n), "new_str": _named(n + 1)}
        steps += [("str_replace", args, edited(n), None), tested(n)]
    return steps


def shell_edits_then_tests(rounds: int) -> list[Step]:
    """An agent with only a shell tool: an edit by ``sed -i`` (no output), then the tests."""
    steps: list[Step] = []
    for n in range(rounds):
        command = f"sed -i 's/{_named(n)}/{_named(n + 1)}/' /repo/mod.py"
        steps += [("bash", {"command": command}, "", True), passing(n)]
    return steps


def _named(n: int) -> str:
    """A line that differs from the others in letters, not only in numbers (those are masked)."""
    return f"x = compute_{chr(97 + n % 26)}{chr(97 + n // 26)}()"


def passing(_: int) -> Step:
    return ("bash", {"command": "pytest -q tests/test_mod.py"}, "12 passed in 0.41s", True)


def falling(n: int) -> Step:
    return ("bash", {"command": "pytest -q tests/test_mod.py"}, f"{30 - n} failed, {n} passed", False)


def failing_alike(_: int) -> Step:
    """The same failure each time, on a host that calls every returned text a success."""
    text = "FAILED tests/test_mod.py::test_parse - KeyError: 'x'\n1 failed, 11 passed in 0.41s"
    return ("bash", {"command": "pytest -q tests/test_mod.py"}, text, True)


def changed_line(n: int) -> str:
    return f"The file /repo/mod.py has been edited:\n    41\t{_named(n + 1)}\n"


def updated(_: int) -> str:
    return "File updated."


def polled(times: int) -> list[Step]:
    steps: list[Step] = []
    for _ in range(times):
        steps.append(("sleep", {"seconds": 30}, "slept 30s", None))
        steps.append(("get_job", {"job_id": "j-17"}, '{"status": "running"}', None))
    return [*steps, ("get_job", {"job_id": "j-17"}, '{"status": "done"}', None)]


MODULES = (
    "cli", "loader", "schema", "defaults", "env", "paths", "plugins", "cache", "errors", "logging", "merge",
    "validate",
)  # fmt: skip


def research(times: int, *, numbered: bool = False) -> list[Step]:
    steps: list[Step] = []
    for n in range(times):
        steps.append(
            ("search_code", {"query": "def parse_config"}, "src/config.py:12: def parse_config(", True)
        )
        name = f"module_{n}" if numbered else MODULES[n]
        steps.append(("read_file", {"path": f"src/{name}.py"}, f"contents of {name}", True))
    return steps


def pages(times: int) -> list[Step]:
    return [("scroll_down", {}, f"[lines {100 * n + 1}-{100 * n + 100}]", None) for n in range(times)]


def edits_failing_alike() -> tuple[list[Step], int]:
    return tests_after_edits(20, changed_line, failing_alike), 2


def queries_answered_with_an_error(
    times: int, answer: str = "Error: service unavailable"
) -> tuple[list[Step], int]:
    """New queries, one error answered as text, on a host that calls every answer a success."""
    return [("search", {"query": f"flights {_named(n)}"}, answer, True) for n in range(times)], 1


def stamped_polls(times: int) -> tuple[list[Step], int]:
    """A status polled again and again, answered alike but for the time of the answer (Unix seconds)."""
    return [
        ("get_status", {"job": "build-7"}, f'{{"status": "pending", "checked_at": {1733212200 + n}}}', True)
        for n in range(times)
    ], 1


def temp_file_runs(times: int) -> tuple[list[Step], int]:
    """One script run again and again from a new temporary file, failing alike (the file's name in the traceback)."""
    names = [hashlib.blake2b(bytes([n]), digest_size=4).hexdigest() for n in range(times)]
    traceback = "File \"/tmp/tmp{}_x.py\", line 1, in <module>\nNameError: name 'x' is not defined"
    return [("run_code", {"code": "print(x)"}, traceback.format(name[:6]), False) for name in names], 1


def error_logs(services: int) -> list[Step]:
    """Each service's error log fetched in turn: log lines, not the log tool's own failures."""
    return [
        (
            "get_logs",
            {"service": f"svc-{_named(n)}", "level": "ERROR"},
            f"ERROR 2024-12-03 07:50:{n:02d} svc-{n}: upstream timeout",
            True,
        )
        for n in range(services)
    ]


def past_the_last_page(pages: int) -> tuple[list[Step], int]:
    """A search paged past its last page, the same empty answer each time."""
    return [
        ("search", {"query": "retry policy", "page": 3 + n}, "No results.", True) for n in range(pages)
    ], 2


def tickets_closed(tickets: int) -> list[Step]:
    """A list of tickets closed one by one, each acknowledged alike."""
    return [
        ("update_ticket", {"ticket_id": 4100 + n, "status": "closed"}, "Ticket updated.", True)
        for n in range(tickets)
    ]


SHAPES: dict[str, tuple[list[Step], int]] = {
    "4 identical rejections, a line-range variant, recovery": identical_then_variant(),
    "5 rejected edits alternating two bodies": alternating(5),
    "7 rejected edits alternating two bodies": alternating(7),
    "5 alternating, a terse error": alternating(5, echo=False),
    "flight change x5, 'not available', searches between": flight_change(
        lambda _: "Error: flight not available"
    ),
    "the same, the error naming the flight": flight_change(lambda f: f"Error: flight {f} not available"),
    "str_replace on one line, 8 whitespace variants": str_replace_variants(),
    "a file viewed 10 lines further back, 47 times": view_back(47),
    "20 edits, the test failing alike after each, ok true": edits_failing_alike(),
    "30 new queries answered 'Error: ...', ok true": queries_answered_with_an_error(30),
    "the same, answered '{\"error\": ...}'": queries_answered_with_an_error(30, '{"error": "unavailable"}'),
    "a status polled 20 times, only its Unix time changing": stamped_polls(20),
    "one script failing alike, a new temp file each run": temp_file_runs(20),
    "a search paged past its last page, 20 'No results.'": past_the_last_page(20),
}


# Honest work that looks repetitive: none of these is a loop, so any denial is a false positive.
HONEST: dict[str, list[Step]] = {
    "a passing test re-run after each of 30 edits": tests_after_edits(30, changed_line, passing),
    "the same, the edit tool answering 'File updated.'": tests_after_edits(30, updated, passing),
    "the same, the edit a 'sed -i' command printing nothing": shell_edits_then_tests(30),
    "a failing count falling after each of 25 edits": tests_after_edits(25, changed_line, falling),
    "a falling count, the edit tool answering 'File updated.'": tests_after_edits(25, updated, falling),
    "a search re-run after each of 12 new findings": research(12),
    "the same, the files read numbered module_0 to module_11": research(12, numbered=True),
    "7 pages of one file": pages(7),
    "a job polled 6 times, a sleep before each": polled(6),
    "the error logs of 20 services, one after another": error_logs(20),
    "20 tickets closed one by one, each 'Ticket updated.'": tickets_closed(20),
}


def calls(steps: list[Step]) -> list[ToolCall]:
    return [
        ToolCall("shape", "agent", n, tool, args, None, out, ok)
        for n, (tool, args, out, ok) in enumerate(steps)
    ]


def shown(first: int | None, start: int) -> str:
    if first is None:
        return "-"
    return f"{first + 1}" + ("" if first + 1 >= start else " early")


def main() -> None:
    detectors = [
        ("default", guard_detector(Guard)),
        *((name.split(":")[0], rule) for name, rule in anchors()),
    ]
    print(f"{'shape':56} {'calls':>5} {'loop':>4}  " + "  ".join(f"{name:>10}" for name, _ in detectors))
    for name, (steps, start) in SHAPES.items():
        row = [shown(detect(calls(steps)), start) for _, detect in detectors]
        print(f"{name:56} {len(steps):5} {start:4}  " + "  ".join(f"{cell:>10}" for cell in row))
    print(
        "(each cell: the call a rule first denies, counted from 1; '-': never; loop: the call the loop starts at)"
    )
    print(f"\n{'honest work':56} {'calls':>5} {'':>4}  " + "  ".join(f"{name:>10}" for name, _ in detectors))
    for name, steps in HONEST.items():
        row = [shown(detect(calls(steps)), 0) for _, detect in detectors]
        print(f"{name:56} {len(steps):5} {'':>4}  " + "  ".join(f"{cell:>10}" for cell in row))
    print("(honest work: every denial is a false positive)")


if __name__ == "__main__":
    main()
