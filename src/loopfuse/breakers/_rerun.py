"""Re-runs that check new work: the same call returning, without an error, a result it already
returned, after some call in between returned something new (a test re-run after an edit).

The window and near-duplicate breakers re-key such a call's entry by ``rerun_key`` of its pair
key, an entry no limit counts, so honest re-runs never add up; a re-run with nothing new since
the call's previous run counts as before. The Redis scripts do the same (``settled_entry`` in
``stores/lua/common.lua``)."""

from __future__ import annotations

from .._rings import CountingWindow
from .._volatile import pair_key

__all__ = ["rerun_key", "settle"]

_RERUN = 0x72_65_72_75_6E  # b"rerun"


def rerun_key(pair: int) -> int:
    """The window entry of a re-run that checks new work, for its call and result's ``pair``."""
    return pair_key(pair, _RERUN)


def settle(window: CountingWindow, news: int, index: int, pair: int, ok: bool | None) -> int:
    """Re-key the ``index``-th entry of ``window`` now that its result's ``pair`` key is known,
    if it is still in the window, and return the window's ``news`` after it (the index of the
    newest call whose result was new to the window). The entry becomes the pair key, or the
    re-run key when the call returned this result before, without an error now, and something
    new came since."""
    if not window.holds(index):
        return news
    rerun = rerun_key(pair)
    previous = window.newest_before(index, pair, rerun)
    if previous is None:
        window.rekey(index, pair)
        return max(news, index)
    window.rekey(index, rerun if ok is not False and news > previous else pair)
    return news
