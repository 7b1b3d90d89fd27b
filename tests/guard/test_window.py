"""The window breaker: timelines from the issue."""

from __future__ import annotations

import threading

import pytest

import loopfuse._stats
from tests.store_fixtures import GuardFactory

from .helpers import run

LS = ("bash", {"command": "ls"})


def test_seventh_identical_call_is_denied_and_every_further_attempt(make_guard: GuardFactory) -> None:
    guard = make_guard()
    assert run(guard, [LS] * 9) == ["ok"] * 6 + ["duplicate"] * 3


def test_denial_reports_count_and_limit(make_guard: GuardFactory) -> None:
    guard = make_guard({"circuit_breaker": {"duplicate_limit": 2}})
    run(guard, [LS, LS])
    decision = guard.check(*LS, agent="a")
    assert (decision.allowed, decision.kind, decision.count, decision.limit) == (False, "duplicate", 2, 2)
    assert decision.tool == "bash"
    assert "2 times" in (decision.message or "")


def test_other_calls_in_between_do_not_hide_a_repeat(make_guard: GuardFactory) -> None:
    guard = make_guard({"circuit_breaker": {"duplicate_limit": 3}})
    timeline = [LS, ("read", {"path": "a"}), LS, ("read", {"path": "b"}), LS, ("read", {"path": "c"}), LS]
    assert run(guard, timeline) == ["ok"] * 6 + ["duplicate"]


def test_old_repeats_expire_as_newer_allowed_calls_arrive(make_guard: GuardFactory) -> None:
    guard = make_guard({"circuit_breaker": {"duplicate_limit": 2, "window": 4}})
    others = [("read", {"path": str(i)}) for i in range(3)]
    # LS, LS fill two of four slots; three other calls push the first LS out.
    assert run(guard, [LS, LS, *others, LS]) == ["ok"] * 6
    # The window now holds one LS: one more runs, the next is the second in the window.
    assert run(guard, [LS, LS]) == ["ok", "duplicate"]


def test_denied_calls_push_nothing_out_of_the_window(make_guard: GuardFactory) -> None:
    guard = make_guard({"circuit_breaker": {"duplicate_limit": 2, "window": 4}})
    run(guard, [LS, LS])
    assert run(guard, [LS] * 50) == ["duplicate"] * 50
    # Only two real calls are needed to push the first LS out; the 50 denials counted for nothing.
    assert (
        run(guard, [("read", {"path": "x"}), ("read", {"path": "y"}), ("read", {"path": "z"}), LS])
        == ["ok"] * 4
    )


def test_argument_order_and_nested_key_order_do_not_matter(make_guard: GuardFactory) -> None:
    guard = make_guard({"circuit_breaker": {"duplicate_limit": 1}})
    assert guard.check("search", {"q": "x", "opts": {"a": 1, "b": 2}}, "a").allowed
    assert not guard.check("search", {"opts": {"b": 2, "a": 1}, "q": "x"}, "a").allowed


def test_annotation_arguments_are_ignored(make_guard: GuardFactory) -> None:
    guard = make_guard({"circuit_breaker": {"duplicate_limit": 2}})
    calls = [("bash", {"command": "probe", "description": f"Run probe step {i}"}) for i in range(3)]
    assert run(guard, calls) == ["ok", "ok", "duplicate"]


def test_ignore_args_can_be_configured(make_guard: GuardFactory) -> None:
    guard = make_guard({"circuit_breaker": {"duplicate_limit": 1, "ignore_args": ["nonce"]}})
    assert run(guard, [("f", {"x": 1, "nonce": 1}), ("f", {"x": 1, "nonce": 2})]) == ["ok", "duplicate"]
    assert run(guard, [("g", {"x": 1, "description": "a"}), ("g", {"x": 1, "description": "b"})]) == [
        "ok",
        "ok",
    ]


THOUGHTS = ["the bug is in the parser", "check the lexer first", "tokens may be cut", "read the tests"]


def test_a_call_whose_arguments_are_all_ignored_keys_is_judged_by_them(make_guard: GuardFactory) -> None:
    """A think tool's only argument is its thought (ignored by default): every think was one call,
    refused at the 7th of an agent's different thoughts."""
    guard = make_guard({"circuit_breaker": {"duplicate_limit": 1}})
    assert run(guard, [("think", {"thought": t}) for t in THOUGHTS]) == ["ok"] * 4
    assert run(guard, [("think", {"thought": THOUGHTS[0]})]) == ["duplicate"]


def test_tools_are_told_apart(make_guard: GuardFactory) -> None:
    guard = make_guard({"circuit_breaker": {"duplicate_limit": 1}})
    assert run(guard, [("a", {"x": 1}), ("b", {"x": 1})]) == ["ok", "ok"]


def test_agents_are_told_apart(make_guard: GuardFactory) -> None:
    guard = make_guard({"circuit_breaker": {"duplicate_limit": 1}})
    assert guard.check(*LS, agent="one").allowed
    assert guard.check(*LS, agent="two").allowed
    assert not guard.check(*LS, agent="one").allowed


def test_exempt_tools_are_neither_checked_nor_counted(make_guard: GuardFactory) -> None:
    guard = make_guard({"circuit_breaker": {"duplicate_limit": 1, "max_calls_per_agent": 2}})
    assert run(guard, [("todo_write", {"t": 1})] * 10) == ["ok"] * 10
    assert run(guard, [("a", {}), ("b", {}), ("c", {})]) == ["ok", "ok", "cap"]
    assert guard.stats()["skipped"] == 10


def test_only_overrides_exempt(make_guard: GuardFactory) -> None:
    guard = make_guard({"circuit_breaker": {"duplicate_limit": 1, "only": ["todo_write"]}})
    assert run(guard, [("todo_write", {})] * 2) == ["ok", "duplicate"]
    assert run(guard, [("bash", {})] * 3) == ["ok"] * 3


def test_disabled_guard_allows_everything(make_guard: GuardFactory) -> None:
    guard = make_guard({"circuit_breaker": {"enabled": False}})
    assert run(guard, [LS] * 400) == ["ok"] * 400


def test_deny_message_template(make_guard: GuardFactory) -> None:
    template = "no {tool}: {kind} {count}/{limit}"
    guard = make_guard({"circuit_breaker": {"duplicate_limit": 1, "deny_message": template}})
    guard.check(*LS, agent="a")
    assert guard.check(*LS, agent="a").message == "no bash: duplicate 1/1"


def test_default_message_tells_the_model_to_stop_and_change_approach(make_guard: GuardFactory) -> None:
    guard = make_guard({"circuit_breaker": {"duplicate_limit": 1}})
    guard.check(*LS, agent="a")
    message = guard.check(*LS, agent="a").message or ""
    assert "refused" in message and "bash" in message
    assert "change your approach" in message and "report to the user" in message


@pytest.mark.parametrize("args", [{"x": object()}, {"x": 1j}, {1: "a", "b": 2}])
def test_unserializable_arguments_fail_open_and_are_counted(args: object, make_guard: GuardFactory) -> None:
    guard = make_guard({"circuit_breaker": {"duplicate_limit": 1}})
    assert all(guard.check("f", args, "a").allowed for _ in range(5))
    assert guard.stats()["fail_open"] == {"unserializable": 5}


RAW_ARGUMENTS = [  # a model's raw arguments as chat APIs deliver them: order, spacing and notes vary
    '{"q": "pricing", "limit": 5, "thought": "try 1"}',
    '{"limit":5,"q":"pricing","thought":"try 2"}',
    '{\n  "thought": "try 3",\n  "q": "pricing",\n  "limit": 5\n}',
]


def test_arguments_given_as_json_text_are_judged_as_the_object(make_guard: GuardFactory) -> None:
    guard = make_guard()
    allowed = [guard.check("search", RAW_ARGUMENTS[i % 3], "a").allowed for i in range(8)]
    assert allowed == [True] * 6 + [False, False]
    assert guard.check("search", {"q": "pricing", "limit": 5}, "a").kind == "duplicate"


@pytest.mark.parametrize("text", ["ls -la", "{not json", '{"a": 1} trailing', '["a", 1]'])
def test_other_texts_are_judged_as_text(make_guard: GuardFactory, text: str) -> None:
    guard = make_guard()
    assert [guard.check("bash", text, "a").allowed for _ in range(7)] == [True] * 6 + [False]
    assert guard.check("bash", text + " ", "a").allowed  # another text is another call


def test_circular_arguments_fail_open(make_guard: GuardFactory) -> None:
    args: dict[str, object] = {}
    args["self"] = args
    guard = make_guard()
    assert guard.check("f", args, "a").allowed
    assert guard.stats()["fail_open"] == {"unserializable": 1}


def test_stats_counts_checks_and_denials_by_kind(make_guard: GuardFactory) -> None:
    guard = make_guard({"circuit_breaker": {"duplicate_limit": 1}})
    run(guard, [LS, LS, LS])
    stats = guard.stats()
    assert stats["checks"] == 3 and stats["allowed"] == 1
    assert stats["denied"] == 2 and stats["denials"] == {"duplicate": 2}
    assert stats["agents"] == 1


@pytest.mark.parametrize("atomic_next", [True, False], ids=["lock-free", "free-threaded build"])
def test_stats_count_every_check_of_concurrent_threads_while_read(
    make_guard: GuardFactory, monkeypatch: pytest.MonkeyPatch, atomic_next: bool
) -> None:
    monkeypatch.setattr(loopfuse._stats, "_ATOMIC_NEXT", atomic_next)
    guard = make_guard({"circuit_breaker": {"duplicate_limit": 1}})
    seen: list[int] = []

    def agent(name: str) -> None:
        for i in range(150):
            guard.check("read", {"page": i % 100}, name)  # pages 0-49 twice: 50 denials
            seen.append(guard.stats()["allowed"])

    threads = [threading.Thread(target=agent, args=(f"agent-{n}",)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    stats = guard.stats()
    assert (stats["checks"], stats["allowed"], stats["denied"]) == (600, 400, 200)
    assert max(seen) <= 400 and guard.stats()["allowed"] == 400


def test_readme_timeline(make_guard: GuardFactory) -> None:
    guard = make_guard({"circuit_breaker": {"duplicate_limit": 3, "window": 5}})
    s = ("search", {"q": "pricing"})
    timeline = [s, ("a", {}), s, s, s, s, ("b", {}), ("c", {}), s]
    assert run(guard, timeline) == ["ok"] * 4 + ["duplicate", "duplicate"] + ["ok"] * 3
