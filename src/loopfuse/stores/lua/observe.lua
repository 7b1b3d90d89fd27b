-- loopfuse: let every breaker of one guard observe the result of one agent's call, atomically.
--
-- Defines observe(arg), which pending.lua runs for each result a round trip carries (a check's, or
-- a flush's); the store prepends the same settings line, common.lua and the fragments as for
-- decide.lua. A result is one argument, its fields at fixed byte positions:
--   1-8    the call's window key                 9-16   the result digest
--   17-24  the pair key of the call key and the result digest
--   25     '0' when the result is an error, '2' a success (ok true), else '1'    26-33  the error digest
--   34-41  the call's near-duplicate key (NONE when it has none)
--   42-49  the pair key of the near-duplicate key and the result digest
--   50-57  the re-run key of the pair key (breakers/_rerun.py)
--   58-65  the re-run key of the near-duplicate pair key
--   66     '1' when the call's tool is an edit tool ([stall] edit_tools: stall and breakers/_rerun.py)
--   67     the length n of the call's full digest, which follows (68 to 67 + n), then the tool's name
-- Each fragment's unit('observe', b, r) gets them as r.key, r.result, r.pair, r.failed, r.succeeded, r.err, r.near,
-- r.near_pair, r.rerun, r.near_rerun, r.edit, r.digest, r.tool, with r.index (the call's window
-- index), r.calls, r.puts and r.found (a success, not of an edit tool, that is a finding).
--
-- A result counts only for an allowed call awaiting it, once (as AgentState.awaited_entry):
-- until the agent's first result, the newest call (`aw`); then the last calls in `pend` (a result
-- for another call before the first one counted turns that on: puts 1, as AgentResults.arrived).
-- The latest result of each of the last `size` call keys that had one is the hash field `lr`:
-- records of the call key and the pair key of it and its result, the newest first; the digests
-- of the agent's last RECENT_RESULTS results are `ld`, the newest first (AgentResults.recent).
-- observe(arg) returns 1 when the result counted, else 0.

-- The window index of the awaiting call of `key`, taken off the awaited calls; nil if none.
local function awaited_entry(key, calls)
  local index
  local pending, awaited = F.pend or '', F.aw
  local p = find_record(pending, key, RECORD)
  if p then
    index = tonumber(string.sub(pending, p + 8, p + RECORD - 1))
    put('pend', string.sub(pending, 1, p - 1) .. string.sub(pending, p + RECORD))
  elseif awaited == key then
    index = calls - 1  -- the newest allowed call
  end
  if awaited and awaited ~= '' then put('aw', '') end
  return index
end

local RECENT_RESULTS = 16  -- _state.py

-- The state is written, and its expiry refreshed, once per round trip, after (flush.lua, decide.lua).
local function observe(arg)
  local n = string.byte(arg, 67)
  local r = {
    key = string.sub(arg, 1, 8), result = string.sub(arg, 9, 16), pair = string.sub(arg, 17, 24),
    failed = string.sub(arg, 25, 25) == '0', succeeded = string.sub(arg, 25, 25) == '2', err = string.sub(arg, 26, 33),
    near = string.sub(arg, 34, 41), near_pair = string.sub(arg, 42, 49),
    rerun = string.sub(arg, 50, 57), near_rerun = string.sub(arg, 58, 65),
    edit = string.sub(arg, 66, 66) == '1', note = string.sub(arg, 66, 66) == '2', digest = string.sub(arg, 68, 67 + n), tool = string.sub(arg, 68 + n),
    calls = tonumber(F.calls) or 0, puts = tonumber(F.puts) or 0,
  }
  r.index = awaited_entry(r.key, r.calls)
  r.found = r.index and r.succeeded and not r.edit and not r.note and finding(F.lr or '', r.key, 16, r.result)
  if not r.index then  -- (before the first result, another call's than the newest: see _state.py)
    if r.puts == 0 then put('puts', 1) end
    return 0
  end
  for _, b in ipairs(OBSERVING) do UNITS[b[1]]('observe', b, r) end
  put('lr', newest_first(F.lr or '', r.key .. r.pair, 16, size))
  put('ld', newest_first(F.ld or '', r.result, 8, RECENT_RESULTS))
  put('puts', r.puts + 1)
  return 1
end
