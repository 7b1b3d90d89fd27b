-- loopfuse: what decide.lua, observe.lua and the breakers' fragments share (the store prepends
-- this file to both scripts, after the settings line).
--
-- All of an agent's state is one hash (KEYS[1]), read by one HMGET and written by one HSET per
-- round trip: a command costs Redis about as much as the rest of a script's run.
-- Keys are 8-byte strings; NONE (8 zero bytes) stands for "none" or "unknown": a call without a
-- near-duplicate key, a cycle entry whose result is not known yet.
-- A pending record is a key and its window index as 12 digits (RECORD bytes).

local RECORD, NONE = 20, '\0\0\0\0\0\0\0\0'
local RESEND = -1  -- a check's answer "send this call again with every key and argument"

-- The breakers' fragments (lua/breakers/<kind>.lua), by kind: each one function unit(op, b, x),
-- b being the breaker's settings ({kind, setting...}, with b.warn set for a warner); one function
-- per fragment, not a table of them, as an EVALSHA runs the script body (and makes each closure in
-- it) on every call. A fragment's top level only defines: it runs once per load when the store
-- runs the scripts as a Redis Function library (redis_scripts.py), so what one run keeps for later
-- in the same run goes on x (the call or result table) or in F, never in a variable of the fragment:
--   unit('check', b, c) -> nil | count, limit[, rule] | RESEND     c: the call (decide.lua)
--   unit('refused', b, c)   the call was denied by this breaker
--   unit('record', b, c)    the call was allowed
--   unit('observe', b, r)   the result r of an awaited call (observe.lua)
--   unit('touch', b)        refresh the expiry of keys of its own (none of the package's has any)
-- A fragment's "-- ops:" header line names those it has, so that no unit is called for an op
-- it lacks: the store's second settings line binds RECORDING, OBSERVING and TOUCHING, the
-- settings of the breakers with that op, which the drivers loop over, and REFUSING, the set of
-- those with refused. A warner (b.warn) only checks.
-- F holds the agent's state hash fields (false when absent): the driver's and those each
-- fragment declares in its "-- fields:" header line, read by one HMGET at the start of the run
-- (the store writes it out where pending.lua calls load_state). Code names a field as F.<name>
-- (or F[<quoted name>]): the store turns that into its position in the reply.
-- put(<quoted name>, value, old) sets a field when value differs from old: F sees it at once, Redis
-- at the end of the run (save); the store writes the field's position in, as for F.

local UNITS, F, OUT = {}, nil, nil  -- F and OUT: each run's own (pending.lua)

local function put(at, field, value, old)
  if value ~= old then
    F[at] = value
    OUT[#OUT + 1] = field
    OUT[#OUT + 1] = value
  end
end

-- Write what the run changed and refresh the expiry of the agent's state.
local function save()
  if #OUT > 0 then redis.call('HSET', KEYS[1], unpack(OUT)) end
  redis.call('PEXPIRE', KEYS[1], ttl)
end

-- The position (from 1) of the first record of `records` (a string of `width`-byte records)
-- that holds `entry` at `offset` (0 when not given: the record starts with it); nil if none.
local function find_record(records, entry, width, offset)
  offset = offset or 0
  local i = 1 + offset
  while true do
    local p = string.find(records, entry, i, true)
    if not p then return nil end
    if (p - 1 - offset) % width == 0 then return p - offset end
    i = p + 1
  end
end

-- How many of the 8-byte entries of `entries` equal `entry`.
local function count_in(entries, entry)
  local n, i = 0, 1
  while true do
    local p = string.find(entries, entry, i, true)
    if not p then return n end
    if (p - 1) % 8 == 0 then n, i = n + 1, p + 8 else i = p + 1 end
  end
end

-- `pending` (records of RECORD bytes) with `entry` awaiting at `index`, at most `bound` records.
local function awaiting(pending, entry, index, bound)
  local p = find_record(pending, entry, RECORD)
  if p then pending = string.sub(pending, 1, p - 1) .. string.sub(pending, p + RECORD) end
  pending = pending .. entry .. string.format('%012d', index)
  if #pending > bound * RECORD then pending = string.sub(pending, RECORD + 1) end
  return pending
end

-- `latest` (records of `width` bytes, the newest first: what the last `bound` updates wrote) with
-- `record` written now. The latest value of an entry is its first record (find_record).
local function newest_first(latest, record, width, bound)
  if #latest >= bound * width then latest = string.sub(latest, 1, (bound - 1) * width) end
  return record .. latest
end

-- `ring` (8-byte entries, at most `bound`) with its entry at `index` (0-based) replaced by `entry`.
local function ring_set(ring, index, entry)
  local at = index * 8
  return string.sub(ring, 1, at) .. entry .. string.sub(ring, at + 9)
end

-- The window index of the newest entry of `ring` (a ring of `bound` 8-byte entries, `pushed`
-- pushed so far) before the `index`-th that equals `entry`, or `newest` when none is newer.
local function newest_before(ring, entry, index, pushed, bound, newest)
  local i = 1
  while true do
    local p = string.find(ring, entry, i, true)
    if not p then return newest end
    if (p - 1) % 8 == 0 then
      local at = pushed - 1 - (pushed - 1 - (p - 1) / 8) % bound
      if at > newest and at < index then newest = at end
      i = p + 8
    else
      i = p + 1
    end
  end
end

-- Whether `result`, of the call `key` of `records` (records of `width` bytes, starting with a
-- key: lr, nl), is a finding: a call with no recent result, answering what none of the agent's
-- last results did (ld, observe.lua; AgentResults.found).
local function finding(records, key, width, result)
  return not find_record(F.ld or '', result, 8) and not find_record(records, key, width)
end

-- The entry for the `index`-th call of `ring` now that its result's `pair` key is known, and
-- `edited` after it (breakers/_rerun.py: the index of the newest successful call of an edit tool,
-- `edit`, or call not made lately, `fresh`, new to the ring): the pair key, or `rerun` for a
-- call that returned this result before, succeeded now (`succeeded`: the host said ok), with
-- something new since.
local function settled_entry(ring, index, pushed, bound, pair, rerun, x, edited, fresh)
  if fresh then return pair, math.max(edited, index) end  -- (a success: as _rerun.py)
  local news = x.edit and not x.failed
  if not news and not (x.succeeded and edited >= 0) then return pair, edited end
  local previous = newest_before(ring, rerun, index, pushed, bound, newest_before(ring, pair, index, pushed, bound, -1))
  if previous < 0 then
    if news then return pair, math.max(edited, index) end
    return pair, edited
  end
  if x.succeeded and edited > previous then return rerun, edited end
  return pair, edited
end
