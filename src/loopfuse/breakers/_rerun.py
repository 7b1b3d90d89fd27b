"""Re-runs that check something new: the same call succeeding (``ok`` true) with a result it
already returned, after something new succeeded in between (a test re-run after each edit, a
search re-run after each new finding).

Something new is a successful call the agent did not make lately: a call of an edit tool new to
the window whatever it answers (an edit answered "File updated." changed what the next test run
tests), or any call that succeeded (``ok`` true), that the breaker has no recent result of and whose
result none of the agent's last results was (``fresh``: a file not read lately; a paraphrased
search answering the list already seen is not). The window and near-duplicate
breakers re-key such a re-run's entry by ``rerun_key`` of its pair key, an entry no limit
counts, so honest re-runs never add up; a re-run with nothing new since the call's previous run
counts as before. What is new is judged by each breaker's own key: the window breaker's is the
whole call, the near-duplicate breaker's masks ids, numbers and timestamps, so a call new only by
a counter or a fresh id (``echo attempt 3``, a new ``request_id``) is new to the first and not to
the second, and a loop with one such call per round is still counted there. A new result of the
same call (a counter, a page of new text) is never something new here. The Redis scripts do the
same (``settled_entry`` in ``stores/lua/common.lua``)."""

from __future__ import annotations

import re
from collections.abc import Callable

from .._calls import CallKey
from .._rings import CountingWindow
from .._volatile import pair_key

__all__ = [
    "COMMAND_ARGUMENTS",
    "DEFAULT_EDIT_TOOLS",
    "NOTE_TOOLS",
    "is_edit",
    "is_note",
    "rerun_key",
    "runs_a_command",
    "settle",
    "writes_files",
    "writes_rows",
]

# Edit tools of well-known agents and MCP servers: Claude Code, the MCP filesystem server,
# SWE-agent, OpenHands, the OpenAI Agents SDK, Codex, Gemini CLI, Cline, Roo Code, Cursor,
# Windsurf, Desktop Commander, the Jupyter MCP server ([stall] edit_tools).
DEFAULT_EDIT_TOOLS = (
    "Edit", "MultiEdit", "NotebookEdit", "Write", "apply_diff", "apply_patch", "create",
    "create_file", "delete_cell", "edit", "edit_block", "edit_cell", "edit_file", "insert_cell",
    "insert_content", "insert_execute_code_cell", "overwrite_cell_source", "replace",
    "replace_file_content", "replace_in_file", "search_and_replace", "search_replace",
    "str_replace", "str_replace_editor", "write_file", "write_to_file",
)  # fmt: skip
_RERUN = 0x72_65_72_75_6E  # b"rerun"
# The arguments in which shell tools take their command.
COMMAND_ARGUMENTS = ("command", "commands", "cmd", "script")
# Tools whose result is the model's own thought: the sequential-thinking MCP server's (a
# thought's number in its arguments and result, so it is not all annotation) and a think tool.
NOTE_TOOLS = frozenset({"think", "sequentialthinking", "sequential_thinking"})
# Tools that keep the model's own notes, answering with the note given back or a count of them:
# a task list (Claude Code's TodoWrite, Gemini CLI's write_todos, Roo Code's update_todo_list), a
# plan (Codex's update_plan), a memory (mem0's add_memory, Gemini CLI's save_memory, Letta's
# core_memory_append, the MCP memory server's add_observations) or a scratchpad (log_note). Not
# one that reads them back (list_todos, archival_memory_search) nor one that may write a note or a
# task into something else (add_note, create_note, create_todo: GitLab's, a CRM's, Todoist's).
_NOTE_NAME = re.compile(
    r"^todos?(?:_?(?:write|update))?$|^(?:write|update|manage)_?todos?(?:_?list)?$|scratch_?pad|notepad"
    r"|(?:^|_)core_?memory_?(?:append|replace|insert|update|write)$|(?:^|_)archival_?memory_?insert$"
    r"|(?:^|[_.])(?:add|save|write|store|append|insert|update|create|remember|record|manage)_?"
    r"(?:memor(?:y|ies)|observations|thoughts?)$|(?:^|[_.])(?:log|take|write|save|record|append)_?notes?$"
    r"|memor(?:y|ies)[._]?(?:write|add|save|store|append|insert|update|create)$"
    r"|^(?:update|write)_?plan$|^create_(?:entities|relations)$"
)
_READS = re.compile(r"(?:get|list|read|search|fetch|view|query|find|show|retrieve|load|recall)[_.]?")
_NOTE_NAMES: dict[str, bool] = {}  # by tool name
_NAMES_KEPT = 256
_NAME_READ = 128  # characters of a tool's name read for a note tool (a made-up name can be long)

# A shell command that changes files: in place (sed -i, perl -i), through a redirection or
# tee, a patch, git, or moving, copying, removing or making files, or installing packages.
# Read in the call's canonical JSON, where a quote inside a value is \".
_SHELL_WRITE = re.compile(
    r"\b(?:sed|perl)\s(?:[^|;&\n]*?\s)?-[A-Za-z]*i"
    r"|(?<![<>&=\-\d\\])>>?[ \t]*(?![&>=]|/dev/null)[\w~./$\\'-]"
    r"|\btee\s|\bapply_patch\b|\bpatch\s+(?:-p\d|-i\b|<)"
    r"|\bgit\s+(?:apply|am|checkout|restore|revert|cherry-pick|stash|mv|rm|reset)\b"
    r"|(?:^|[\s;&|(\"])(?:mv|cp|rm|touch|mkdir|ln|truncate)\s"
    r"|\b(?:pip3?|uv pip|npm|pnpm|yarn|poetry|cargo|go)\s+(?:install|add|get|remove|uninstall)\b"
)
# A SQL statement that changes a database, opening the value of a key that takes one (written
# in canonical JSON, where a newline is \n): rows written (UPDATE needs its SET, INSERT its INTO,
# DELETE its FROM) or the schema changed. Spaces and names are disjoint and taken possessively
# (a name holds no backslash but a quote's), so no text makes the pattern backtrack.
_SQL_SPACE = r"(?:\s|\\[nrt])++"
_SQL_NAME = r'(?:[\w.\[\]`]|\\")++'
_SQL_WRITE = re.compile(
    r'"(?:sql|sql_?query|query|statement|stmt)":"(?:\s|\\[nrt])*+(?i:'
    rf"update{_SQL_SPACE}{_SQL_NAME}(?:{_SQL_SPACE}(?:as{_SQL_SPACE})?\w++)?{_SQL_SPACE}set\b"
    rf"|(?:insert|replace|upsert)(?:{_SQL_SPACE}or{_SQL_SPACE}\w++)?{_SQL_SPACE}into\b"
    rf"|delete{_SQL_SPACE}from\b|merge{_SQL_SPACE}into\b|truncate{_SQL_SPACE}table\b"
    rf"|(?:create|alter|drop)(?:{_SQL_SPACE}or{_SQL_SPACE}replace)?(?:{_SQL_SPACE}(?:unique|temporary|temp|materialized)\b)*+"
    rf"{_SQL_SPACE}(?:table|index|view|schema|sequence|trigger|function|type)\b)"
)
# A tool that runs SQL, where a "query" is one (a web search's or a docs search's is text): a
# word of its name (split at "_", "-", ".", ":" and a lower-case letter before a capital) names
# SQL or a database, or the name is a query run (``query``, ``run_query``, ``write_query``).
_SQL_WORDS = frozenset({
    "sql", "db", "database", "postgres", "postgresql", "pg", "mysql", "mariadb", "sqlite", "bigquery",
    "snowflake", "duckdb", "clickhouse", "redshift", "trino", "presto", "athena", "supabase", "mssql",
    "oracle",
})  # fmt: skip
_WORD_BREAK = re.compile(r"[_\-.:]+|(?<=[a-z0-9])(?=[A-Z])")
_SQL_TOOLS: dict[str, bool] = {}  # by tool name
_QUERY_RUN = re.compile(r"(?:(?:run|execute|exec|read|write)_)?query", re.IGNORECASE)
# Every match of _SHELL_WRITE holds one of these: most calls' text has none, and this search
# costs a tenth of the pattern's.
_WRITE_WORDS = re.compile(r">|sed|perl|tee|patch|git|mv|cp|rm|touch|mkdir|ln|truncate|install|add|get|remove")
_SHELL_TEXT = 8_192  # characters of a call read for a write: a command, not a file's content
_WRITES: dict[int, bool] = {}  # by call key: each breaker asks about the same result's call
_WRITES_KEPT = 64  # the breakers ask about one result one after another: a few suffice


def is_edit(call: CallKey, edit_tools: frozenset[str]) -> bool:
    """Whether ``call``'s tool is one of ``edit_tools``, also as an MCP server's tool is named by
    its host (``mcp__filesystem__write_file`` in Claude Code), or, while there are edit tools,
    it runs a shell command (``command``, ``cmd`` or ``script``) that changes files
    (``writes_files``) or a SQL statement that changes a database (``writes_rows``)."""
    if _named(call.tool, edit_tools):
        return True
    if not edit_tools:
        return False
    writes = _WRITES.get(call.key)
    if writes is None:
        if len(_WRITES) >= _WRITES_KEPT:
            _WRITES.clear()
        text = call.text
        writes = (runs_a_command(text) and writes_files(text)) or writes_rows(text, call.tool)
        _WRITES[call.key] = writes
    return writes


def runs_a_command(text: str) -> bool:
    """Whether a call's canonical JSON names a shell command (one of ``COMMAND_ARGUMENTS``;
    ``"command`` finds both of its first two)."""
    return '"command' in text or '"cmd"' in text or '"script"' in text


def is_note(call: CallKey) -> bool:
    """Whether ``call`` is the model's own note (arguments that are all annotation, a thinking
    tool, ``NOTE_TOOLS``, or a tool keeping its task list, plan or memory, also as its MCP host
    names it): never something new, whatever it returns."""
    return call.note or _keeps_notes(call.tool)


def _keeps_notes(tool: str) -> bool:
    """Whether ``tool`` is a thinking tool or one keeping the model's notes (``_NOTE_NAME``)."""
    return _by_name(_NOTE_NAMES, tool, _judged_note)


def _judged_note(tool: str) -> bool:
    if len(tool) > _NAME_READ:
        return _named(tool, NOTE_TOOLS)
    name = tool.rpartition("__")[2].lower()
    bookkeeping = _READS.match(name) is None and _NOTE_NAME.search(name) is not None
    return _named(tool, NOTE_TOOLS) or bookkeeping


def _by_name(table: dict[str, bool], tool: str, judge: Callable[[str], bool]) -> bool:
    """``judge(tool)``, remembered in ``table`` by name (the last ``_NAMES_KEPT`` names; a
    made-up name longer than ``_NAME_READ`` is judged each time, never kept)."""
    found = table.get(tool)
    if found is None:
        found = judge(tool)
        if len(tool) <= _NAME_READ:
            if len(table) >= _NAMES_KEPT:
                table.clear()
            table[tool] = found
    return found


def _named(tool: str, names: frozenset[str]) -> bool:
    """Whether ``tool`` is one of ``names``, also as an MCP host names a server's tool
    (``mcp__<server>__<name>``)."""
    return tool in names or ("__" in tool and tool.rpartition("__")[2] in names)


def writes_files(text: str) -> bool:
    """Whether ``text`` holds a shell command that changes files or installs packages."""
    if _WRITE_WORDS.search(text, 0, _SHELL_TEXT) is None:
        return False
    return _SHELL_WRITE.search(text, 0, _SHELL_TEXT) is not None


def writes_rows(text: str, tool: str) -> bool:
    """Whether a call's canonical JSON holds a SQL statement that changes a database (an
    ``UPDATE ... SET``, ``INSERT INTO``, ``DELETE FROM``, ``CREATE INDEX``...) under a key that
    takes one: ``sql``, ``statement``, ``stmt``, or ``query`` for a tool that runs SQL (a web
    search for "create table postgres example" changes nothing)."""
    takes_sql = '"sql' in text or '"statement"' in text or '"stmt"' in text
    if not takes_sql and ('"query' not in text or not _runs_sql(tool)):
        return False
    return _SQL_WRITE.search(text, 0, _SHELL_TEXT) is not None


def _runs_sql(tool: str) -> bool:
    """Whether the tool's name says it runs SQL (also as its MCP host names it)."""
    return _by_name(_SQL_TOOLS, tool, _judged_sql_tool)


def _judged_sql_tool(tool: str) -> bool:
    name = tool.rpartition("__")[2][:_NAME_READ]
    words = {word.lower() for word in _WORD_BREAK.split(name)}
    return not _SQL_WORDS.isdisjoint(words) or _QUERY_RUN.fullmatch(name) is not None


def rerun_key(pair: int) -> int:
    """The window entry of a re-run that checks an edit, for its call and result's ``pair``."""
    return pair_key(pair, _RERUN)


def settle(
    window: CountingWindow,
    edited: int,
    index: int,
    pair: int,
    ok: bool | None,
    edit: bool,
    fresh: bool = False,
) -> int:
    """Re-key the ``index``-th entry of ``window`` now that its result's ``pair`` key is known,
    if it is still in the window, and return ``edited`` after it: the index of the newest
    successful call of an edit tool (``edit``), or successful call not made lately (``fresh``, ``ok``
    true), whose call and result were new to the window. The entry becomes the pair key, or the re-run key when the
    call returned this result before, succeeded now (``ok`` true: a result the host did not call a
    success or a failure could be the same failure again) and something new came since."""
    if not window.holds(index):
        return edited
    # A finding (a success) has no result of its call lately, so no entry of its pair to search
    # for (short of results arriving out of order past the window's length: it counts, as a pair).
    if fresh:
        window.replace(index, pair)
        return max(edited, index)
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
