"""Loops whose results carry noise that tells nothing new, on both stores: a call retried while it
fails the same way, each error naming a fresh request id; a page clicked again and again whose
snapshot shows the time."""

from __future__ import annotations

import random
import string

import pytest

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


def _snapshot(step: int) -> str:
    minute, ago = 4 + step // 3, 1 + step // 2
    return f"- banner: Acme Store, {minute}:0{step % 3} PM\n- button 'Load more' [ref=e12]\n- text: updated {ago} min ago"


def test_a_click_and_snapshot_cycle_is_refused_whatever_time_the_page_shows(
    make_guard: GuardFactory,
) -> None:
    """Each snapshot read as new, so the block never repeated: the cap stopped it (300 calls)."""
    guard, ran = make_guard(), 0
    for step in range(30):
        click = run(guard, "browser_click", {"element": "Load more", "ref": "e12"}, "Clicked", ok=True)
        if not (click and run(guard, "browser_snapshot", {}, _snapshot(step), ok=True)):
            break
        ran += 1
    assert (
        ran == 3 and guard.check("browser_click", {"element": "Load more", "ref": "e12"}, "a").kind == "cycle"
    )


def _renumbered(first: int, style: str) -> str:
    """The same page, its element refs numbered from ``first`` (``style`` "e" or "s<n>e")."""
    refs = [f"[ref={style}{first + n}]" for n in range(4)]
    return (
        "- Page URL: https://shop.example/list?page=1\n- Page Snapshot:\n```yaml\n"
        f"- list {refs[0]}:\n  - listitem {refs[1]}: Widget A $10\n  - listitem {refs[2]}: Widget B $12\n"
        f'- button "Next" {refs[3]}\n```'
    )


@pytest.mark.parametrize("style", ["e", "s{n}e"])
def test_a_next_button_that_never_changes_the_page_is_refused_whatever_its_refs_are_numbered(
    make_guard: GuardFactory, style: str
) -> None:
    """Each snapshot numbered its refs anew (as Playwright's MCP server may), so each click read as
    a new result and the loop ran to the cap (300 calls)."""
    guard, allowed = make_guard(), []
    for n in range(12):
        ref, page = style.format(n=n + 1), _renumbered(40 * (n + 1), style.format(n=n + 2))
        args = {"element": "Next button", "ref": f"{ref}{3 + 40 * n}"}
        allowed.append(run(guard, "browser_click", args, page, ok=True))
    assert allowed == [True] * 9 + [False] * 3
    assert guard.check("browser_click", args, "a").kind == "near_duplicate"


def test_pages_that_differ_beside_their_refs_are_each_new(make_guard: GuardFactory) -> None:
    guard = make_guard()
    for n in range(20):
        args = {"element": "Next button", "ref": f"e{3 + 40 * n}"}
        page = _renumbered(40 * (n + 1), "e").replace("page=1", f"page={n + 1}").replace("$10", f"${n}")
        assert run(guard, "browser_click", args, page, ok=True)
