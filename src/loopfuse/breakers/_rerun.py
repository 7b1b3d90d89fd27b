"""Re-runs that check an edit: the same call succeeding (``ok`` true) with a result it already
returned, after a call of an edit tool with new arguments succeeded in between (a test re-run
after each edit).

The window and near-duplicate breakers re-key such a call's entry by ``rerun_key`` of its pair
key, an entry no limit counts, so honest re-runs never add up; a re-run with no edit since the
call's previous run counts as before. Only an edit counts as new here: a result new for any
other reason (a counter, a fresh id, a page of new text) would let every loop with one such call
per round run uncounted. The Redis scripts do the same (``settled_entry`` in
``stores/lua/common.lua``)."""

from __future__ import annotations

from .._rings import CountingWindow
from .._volatile import pair_key

__all__ = ["DEFAULT_EDIT_TOOLS", "rerun_key", "settle"]

# Edit tools of well-known agents and MCP servers: Claude Code, the MCP filesystem server,
# SWE-agent, OpenHands, the OpenAI Agents SDK ([stall] edit_tools).
DEFAULT_EDIT_TOOLS = (
    "Edit", "MultiEdit", "NotebookEdit", "Write", "apply_patch", "create", "create_file", "edit",
    "edit_file", "str_replace", "str_replace_editor", "write_file",
)  # fmt: skip
_RERUN = 0x72_65_72_75_6E  # b"rerun"


def rerun_key(pair: int) -> int:
    """The window entry of a re-run that checks an edit, for its call and result's ``pair``."""
    return pair_key(pair, _RERUN)


def settle(window: CountingWindow, edited: int, index: int, pair: int, ok: bool | None, edit: bool) -> int:
    """Re-key the ``index``-th entry of ``window`` now that its result's ``pair`` key is known,
    if it is still in the window, and return ``edited`` after it: the index of the newest
    successful call of an edit tool (``edit``) whose call and result were new to the window. The
    entry becomes the pair key, or the re-run key when the call returned this result before,
    succeeded now (``ok`` true: a result the host did not call a success or a failure could be
    the same failure again) and an edit came since."""
    if not window.holds(index):
        return edited
    news, succeeded = edit and ok is not False, ok is True
    if not news and not (succeeded and edited >= 0):
        window.replace(index, pair)  # neither news nor a re-run it could be: no search
        return edited
    rerun = rerun_key(pair)
    previous = window.newest_before(index, pair, rerun)
    if previous is None:
        window.replace(index, pair)
        return max(edited, index) if news else edited
    window.replace(index, rerun if succeeded and edited > previous else pair)
    return edited
