"""Masking volatile values: the quick paths give exactly what the full pattern gives."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loopfuse._volatile import (
    _KEYED_DURATION,
    _NUMBER,
    _SHAPES,
    ERROR_MASKS,
    MASKS,
    RESULT_MASKS,
    _durations_masked,
    _error_digest,
    mask_text,
    result_digest,
    result_digests,
)

# Characters the shapes are made of, so random texts often hold uuids, dates and hex ids.
# Past ASCII: an Arabic-Indic digit (no digit to the classes, which are ASCII's), the micro sign
# (a duration's unit), letters ("\u017f" folds to "s"), a check mark, a lone surrogate.
ALPHABET = "0123456789abcdefxyzmnsuptABCDEF-:._ T+Z=#\0\n\u0663\u00b5\u00e9\u017f\u2713\u00c2\ud800"
PIECES = st.sampled_from(
    ["2024-05-01T10:20:30Z", "2024-05-01", "12:30:45", "deadbeef42", "0x1f2e3d4c", "550e8400-e29b-41d4-a716-446655440000",
     "abcDEF123_-ghiJKL456_-mnoPQR789", "-3.5", "1.2.3", "--7", "x-1.5-2", "page 2", "\u0663\u0664", "  ",
     "0.42s", "12 ms", "0m0.523s", "3 seconds", "5\u00b5s", "5 \u00b5s", "\u2713 case 3 (12 ms)", "2 secrets", "7s",
     "31415926535897932.5", "\u00e92024-05-01", "caf\u00e9 12:30:45", "\u00e9deadbeef42",
     "2024-05-01 10:20:30,123", "12:30:45,5", "20240501T102030Z", "20240501T102030.5+0100", "1,2",
     "1733212245", "1733212245.5", "1733212245123", "0.1733212245", "17332122451", "1733212245 s",
     "12:04 PM", "9:30am", "5 min ago", "3 hours ago", "12:04 PMx", "10 mins agone",
     "/tmp/tmpk3j_x9a2.py", "tmp.Xa81bQz0Pc", "tmp_outputs", "tmpab3c4d5e9", "_tmpk3j_x9a2",
     '"duration_seconds": 1.3', "'took': 5", '"elapsedMs":-12', '"Duration" : 3', '"duration": "3s"', '"latency": 2']
)  # fmt: skip
TEXTS = st.lists(st.one_of(st.text(ALPHABET, max_size=12), PIECES), max_size=12).map("".join)
MASK_SETS = st.sampled_from(
    [
        *(frozenset(m) for m in (MASKS, RESULT_MASKS, ERROR_MASKS)),
        *(frozenset(m) for m in ({"numbers"}, {"whitespace"}, {"uuids"}, {"cursors", "numbers"}, set())),
        *(frozenset(m) for m in ({"timestamps"}, {"hex_ids"}, {"timestamps", "numbers"})),
        *(frozenset(m) for m in ({"temp_names"}, {"temp_names", "numbers"})),
        *(frozenset(m) for m in ({"durations"}, {"durations", "numbers"}, {"durations", "hex_ids"})),
    ]
)


def full_pattern(text: str, masks: frozenset[str]) -> str:
    """The masking as it was: one pattern of every class in ``masks``, tried at every position."""
    shapes = [_SHAPES[name] for name in _SHAPES if name in masks]
    branches = [r"\b(?=[A-Za-z_\-:.]*+\d)(?:" + "|".join(shapes) + ")"] if shapes else []
    branches += [_KEYED_DURATION] if "durations" in masks else []
    branches += [_NUMBER] if "numbers" in masks else []
    text = re.sub("|".join(branches), "#", text, flags=re.ASCII) if branches else text
    return " ".join(text.split()) if "whitespace" in masks else text


@settings(max_examples=1000, deadline=None)
@given(TEXTS, MASK_SETS)
def test_the_quick_paths_mask_exactly_what_the_full_pattern_masks(text: str, masks: frozenset[str]) -> None:
    assert mask_text(text, masks) == full_pattern(text, masks)
    assert mask_text(text, sorted(masks)) == full_pattern(text, masks)  # any collection of names


@settings(max_examples=500, deadline=None)
@given(TEXTS)
def test_a_results_durations_are_masked_as_the_full_pattern_masks_them(text: str) -> None:
    assert _durations_masked(text) == full_pattern(text, frozenset({"durations"}))


def test_each_shape_is_still_masked_in_prose() -> None:
    text = "run 550e8400-e29b-41d4-a716-446655440000 at 2024-05-01T10:20:30Z, commit deadbeef42, took 3.5 s"
    assert mask_text(text, MASKS) == "run # at #, commit #, took #"
    assert mask_text(text, RESULT_MASKS) == "run # at #, commit #, took #"


def test_the_timestamps_of_python_logging_and_compact_iso_are_masked() -> None:
    """A log line read again a second later is the same result."""
    first = "2024-12-03 07:50:45,123 INFO build 20241203T075045Z: 3 failed"
    again = "2024-12-03 07:50:46,987 INFO build 20241203T075046Z: 3 failed"
    assert mask_text(first, RESULT_MASKS) == mask_text(again, RESULT_MASKS) == "# INFO build #: 3 failed"
    assert mask_text("ids 1,2,3 at 10:20:30,5", RESULT_MASKS) == "ids 1,2,3 at #"


def test_a_unix_time_is_a_timestamp_and_other_long_numbers_are_kept() -> None:
    """An answer stamped with the time it was made, in seconds, ms, us or ns, reads the same."""
    first = '{"status": "pending", "ts": 1733212245, "at": 1733212245.123456, "ms": 1733212245123}'
    again = '{"status": "pending", "ts": 1733212246, "at": 1733212246.654321, "ms": 1733212246987}'
    masked = '{"status": "pending", "ts": #, "at": #, "ms": #}'
    assert mask_text(first, RESULT_MASKS) == mask_text(again, RESULT_MASKS) == masked
    assert mask_text("ns 1733212245123456789", RESULT_MASKS) == "ns #"
    kept = "loss 0.1733212245, id 17332122451, 999999999, 2000000000, v1.1733212245, x1733212245"
    assert mask_text(kept, RESULT_MASKS) == kept


def test_a_temporary_files_random_name_is_masked_and_a_word_is_kept() -> None:
    """A script run from a new temporary file each time fails with the same traceback."""
    first = 'File "/tmp/tmpk3j_x9a2.py", line 3 (log in /tmp/tmp.Xa81bQz0Pc)'
    again = 'File "/tmp/tmp8_zzq1ab.py", line 3 (log in /tmp/tmp.b7QpLm2Zx0)'
    assert (
        mask_text(first, RESULT_MASKS)
        == mask_text(again, RESULT_MASKS)
        == 'File "/tmp/#.py", line 3 (log in /tmp/#)'
    )
    kept = "/work/tmp_outputs/tmpabcdefgh x_tmpk3j_x9a2 /tmp/tmpab3c4d5e9"  # no digit; inside a word; 9 long
    assert mask_text(kept, RESULT_MASKS) == kept


def test_a_result_keeps_its_counts_and_loses_how_long_it_took() -> None:
    """A re-run that changed nothing reads the same; one with fewer failures does not."""
    first, again = "3 failed, 2 passed in 0.42s", "3 failed, 2 passed in 0.47s"
    assert mask_text(first, RESULT_MASKS) == mask_text(again, RESULT_MASKS) == "3 failed, 2 passed in #"
    assert mask_text("2 failed, 3 passed in 0.40s", RESULT_MASKS) != mask_text(first, RESULT_MASKS)
    assert mask_text("real\t0m0.523s (took 12 ms, 3 seconds)", RESULT_MASKS) == "real\t# (took #, #)"
    assert mask_text("3 steps, 4 secrets, 5 samples", RESULT_MASKS) == "3 steps, 4 secrets, 5 samples"


def test_a_snapshots_element_refs_are_masked_and_its_text_kept() -> None:
    """Playwright's MCP server numbers the refs of a new snapshot of the same page anew."""
    first = '- button "Next" [ref=e12]\n- link "Page 2" [ref=s3e14]'
    again = '- button "Next" [ref=e52]\n- link "Page 2" [ref=s4e54]'
    assert result_digests(first, False) == result_digests(again, False)
    assert result_digests(first, False) != result_digests(again.replace("Page 2", "Page 3"), False)
    long_page = "- text: x\n" * 1_000  # the refs in the middle of a long snapshot too
    assert result_digests(long_page + first + long_page, True) == result_digests(
        long_page + again + long_page, True
    )
    assert result_digests("[ref=e12] [refs=e12]", False) != result_digests("[ref=e12] [refs=e13]", False)
    assert result_digests("[ref=4411] Fix login", False) != result_digests("[ref=4412] Fix login", False)


def test_a_duration_under_a_key_naming_it_is_masked() -> None:
    """Codex's shell answers with the command's duration in JSON: a re-run of the same failing
    test read as a new result each time."""
    run = '{"metadata": {"duration_seconds": %s, "exit_code": 101}, "output": "1 failed"}'
    assert result_digest(run % 1.3) == result_digest(run % 12) == result_digest(run % 0.0)
    assert result_digest(run % 1.3) != result_digest(run.replace("1 failed", "2 failed") % 1.3)
    assert mask_text("{'took': 5, 'hits': 3}", RESULT_MASKS) == "{#, 'hits': 3}"
    assert mask_text('{"durationMs":12,"count":4}', RESULT_MASKS) == '{#,"count":4}'
    assert mask_text('{"runs": 2, "timeout": 30}', RESULT_MASKS) == '{"runs": 2, "timeout": 30}'
    limits = '{"execution_timeout": 30, "wall_time_limit": 3600, "tookens": 3}'  # limits, not durations
    assert mask_text(limits, RESULT_MASKS) == limits
    watched = '{"status": "degraded", "response_time_ms": %d, "latency_p99": %d}'  # what was asked for
    assert result_digest(watched % (2300, 900)) != result_digest(watched % (520, 900))
    assert result_digest(watched % (520, 900)) != result_digest(watched % (520, 400))


def test_a_long_result_loses_the_duration_at_its_end_only() -> None:
    """Where tools say how long a call took: the last 512 characters; a bounded cost per result."""
    body = "\n".join(f"test_{n} ... ok" for n in range(60))
    first, again = f"{body}\nRan 60 tests in 0.42s", f"{body}\nRan 60 tests in 0.47s"
    assert result_digest(first) == result_digest(again)
    assert result_digest(f"took 0.1s\n{body}") != result_digest(
        f"took 0.2s\n{body}"
    )  # 800 characters before the end
    assert result_digest(f"{body}\nRan 60 tests in 0.42s\n1 failed") != result_digest(
        f"{body}\nRan 60 tests in 0.42s"
    )


@settings(max_examples=500, deadline=None)
@given(TEXTS, st.lists(st.integers(0, 10**6), min_size=1))
def test_an_errors_digest_does_not_change_with_its_numbers(text: str, numbers: list[int]) -> None:
    """Any number of the error changed, whatever its number of digits: the same failure."""
    cycle = iter(numbers * (len(text) + 1))
    renumbered = re.sub(r"[0-9]+", lambda _: str(next(cycle)), text)
    assert _error_digest(renumbered) == _error_digest(text)


def test_an_errors_digest_does_not_change_with_a_number_shaped_like_a_unix_time() -> None:
    """A seed in 1e9..2e9 is masked as a time, others had their digits dropped: two failures."""
    error = "FAILED tests/test_dur.py::test_parse_days - KeyError: 'd' (randomly-seed={})"
    seeds = (1443094727, 1999999999, 2701057193, 987654321)
    assert len({result_digests(error.format(seed), True)[1] for seed in seeds}) == 1


def test_an_error_with_other_words_or_signs_is_another_error() -> None:
    assert _error_digest("order 3 not found") == _error_digest("order 1204 not found")
    assert _error_digest("order 3 not found") != _error_digest("user 3 not found")
    assert _error_digest("expected -1, got 2") != _error_digest("expected 1, got -2")
    assert _error_digest("échec à la ligne 3") == _error_digest("échec à la ligne 45")  # not ASCII


@pytest.mark.parametrize(
    "error",
    [
        "Error code: 529 - {{'type': 'overloaded_error', 'request_id': 'req_011C{token}'}}",
        "Error code: 429 - Rate limit reached (request id: req_{hexed})",
        "403 Resource not accessible\nx-github-request-id: {upper}:1F3B:5A1C2:9B2D11:7F00AA12",
        "TypeError: Cannot read properties of undefined\nBuild ID: {token}",
        # an MCP server's error: the request id on its first line, a long hint after it
        "X-AREQUESTID: req_{hexed}\nField 'project' is required. " + "See the field reference. " * 20,
    ],
)
def test_an_errors_digest_does_not_change_with_a_fresh_request_id(error: str) -> None:
    """Each attempt's error named a new request id, so the same failure read as a new one."""
    ids = [("SHz9oq8X8uTe6zZ5cEDz", "3f2a9b8c7d6e5f4a3b2c1d0e9f8a7b6c", "CE8A"),
           ("Kq2mPw9ZxLrT4vNb8YhJ", "9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d", "A1B2")]  # fmt: skip
    digests = {_error_digest(error.format(token=t, hexed=h, upper=u)) for t, h, u in ids}
    assert len(digests) == 1


def test_names_with_a_digit_in_an_error_are_kept() -> None:
    assert _error_digest("psycopg2 failed on ubuntu2204") != _error_digest("psycopg3 failed on debian12")
    assert _error_digest("no module psycopg2") != _error_digest("no module pgvector2")


def test_only_an_error_gets_an_error_digest() -> None:
    listing = "\n".join(f"{n}: value = compute({n * 7})" for n in range(100, 200))
    assert result_digests(listing, False)[1] == 0
    digest, error = result_digests(listing, True)
    assert digest == result_digest(listing) and error == _error_digest(listing)
