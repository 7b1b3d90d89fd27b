-- loopfuse: what decide.lua, observe.lua and the breakers' fragments share (the store prepends
-- this file to both scripts, after the settings line, which also defines load_state()).
--
-- Keys are 8-byte strings; NONE (8 zero bytes) stands for "none" or "unknown": a call without a
-- near-duplicate key, a cycle entry whose result is not known yet.
-- A pending record is a key and its window index as 12 digits (RECORD bytes).

local RECORD, NONE = 20, string.rep('\0', 8)
local RESEND = -1  -- a check's answer "send this call again with every key and argument"

-- The breakers' fragments (lua/breakers/<kind>.lua), by kind, each a table of functions of b (the
-- breaker's settings, {kind, setting...}, with b.warn set for a warner):
--   check(b, c) -> nil | count, limit[, rule] | RESEND     c: the call (decide.lua)
--   refused(b, c)   the call was denied by this breaker (optional)
--   record(b, c)    the call was allowed (optional; never for a warner)
--   observe(b, r)   the result r of an awaited call (observe.lua; optional; never for a warner)
--   touch(b)        refresh the expiry of keys of its own (optional)
-- F holds the agent's state hash fields this run read, by name: the driver's and those each
-- fragment declares in its "-- fields:" header line, read by one HMGET (load_state()).
-- put(field, value, old) writes a field at the end of the run when value differs from old.
local UNITS, F, OUT = {}, {}, {}

local function put(field, value, old)
  if value ~= old then
    OUT[#OUT + 1] = field
    OUT[#OUT + 1] = value
  end
end

-- Write what put() collected into the state hash.
local function save()
  if #OUT > 0 then
    redis.call('HSET', KEYS[1], unpack(OUT))
    OUT = {}
  end
end

-- The position (from 1) of `entry` in `records`, a string of `width`-byte records; nil if absent.
local function find_record(records, entry, width)
  local i = 1
  while true do
    local p = string.find(records, entry, i, true)
    if not p then return nil end
    if (p - 1) % width == 0 then return p end
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

-- Remember `entry`'s latest result (as `entry_pair`) in the hash `table_key` bounded by the ring
-- `ring_key`: the entry remembered `bound` results ago goes unless updated since. The new count.
local function remember(table_key, ring_key, entry, entry_pair, count, bound)
  count = count + 1
  local at = ((count - 1) % bound) * 8
  local oldest = redis.call('GETRANGE', ring_key, at, at + 7)
  if #oldest == 8 then
    local v = redis.call('HGET', table_key, oldest)
    if v and tonumber(string.sub(v, 9)) == count - bound then redis.call('HDEL', table_key, oldest) end
  end
  redis.call('SETRANGE', ring_key, at, entry)
  redis.call('HSET', table_key, entry, entry_pair .. count)
  return count
end
