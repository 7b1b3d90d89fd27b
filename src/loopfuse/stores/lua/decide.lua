-- loopfuse: evaluate every breaker of one guard for one agent's call, atomically.
--
-- The store prepends one line binding the guard's settings (so a check sends only its call):
--   local size, ttl, breakers = <window length>, <idle expiry ms>, {{<kind>, <setting>...}, ...}
-- with the breakers in the guard's order:
--   {'cap', limit} | {'duplicate', result_aware, same_result_limit, progress_limit}
--   | {'repeat', max_repeats, result_aware} | {'same_error', limit, identical_limit}
--
-- KEYS[1]  the agent's state hash: calls, denials, pos, the loop brake's streak, the window's
--          run of one call, the run of errors, awaited results, first:<kind>
-- KEYS[2]  the agent's window: a string of 8-byte entries (call keys, or pair keys of a call
--          and its result once known), a ring of at most size entries
-- KEYS[3]  the latest result of each recent call key: key -> pair key .. update number
-- KEYS[4]  the ring of call keys in the order their results arrived (bounds KEYS[3])
-- ARGV[1]  the call's window key (8 bytes)      ARGV[2]  the call's full digest (32 bytes)
-- ARGV[3]  the tool's name                      ARGV[4], ARGV[5]  the window limit for this
--          call without and with a known result (per-tool limits are resolved by the store)
--
-- Returns 0 when the call is allowed and recorded, else {kind, count, limit, first, denials in a row}.
-- A denied call is recorded by no breaker; the loop brake's streak counts its own refusals.
-- Pair keys and digests are computed by the store: Lua numbers are doubles, so it only compares bytes.

local state, win, latest = KEYS[1], KEYS[2], KEYS[3]
local key, digest, tool = ARGV[1], ARGV[2], ARGV[3]
local plain_limit, result_limit = tonumber(ARGV[4]), tonumber(ARGV[5])
local PENDING, RECORD = math.min(size, 32), 20

local f = redis.call('HMGET', state, 'calls', 'streak', 'digest', 'denials', 'pos', 'stale', 'puts',
  'rk', 'rl', 'rs', 'et', 'es', 'ec', 'ecs', 'pend')
local calls, streak, last = tonumber(f[1]) or 0, tonumber(f[2]) or 0, f[3]
local denials, pos, stale, puts = tonumber(f[4]) or 0, tonumber(f[5]) or 0, tonumber(f[6]) or 0, tonumber(f[7]) or 0
local run_key, run_len, run_stale = f[8], tonumber(f[9]) or 0, tonumber(f[10]) or 0
local err_tool, err_streak, err_call, err_call_streak = f[11], tonumber(f[12]) or 0, f[13], tonumber(f[14]) or 0
local pending = f[15] or ''
local ring
local changes = {}

local function count_in(entry)
  local n, i = 0, 1
  while true do
    local p = string.find(ring, entry, i, true)
    if not p then return n end
    if (p - 1) % 8 == 0 then n, i = n + 1, p + 8 else i = p + 1 end
  end
end

-- The pair key of this call's latest result, nil when none is known.
local function latest_pair()
  if puts == 0 then return nil end
  local v = redis.call('HGET', latest, key)
  return v and string.sub(v, 1, 8) or nil
end

local function check_window(b)
  ring = redis.call('GET', win) or ''
  local n, limit = count_in(key), plain_limit
  local pair = b[2] == 1 and latest_pair() or nil
  if pair then n, limit = n + count_in(pair), result_limit end
  if n >= limit then return n, limit end
  if not pair or run_key ~= key then return nil end
  if b[3] > 0 and run_stale >= b[3] then return run_stale, b[3] end
  if b[4] > 0 and run_len >= b[4] then return run_len, b[4] end
  return nil
end

local function check_same_error(b)
  if err_tool ~= tool then return nil end
  if err_streak >= b[2] then return err_streak, b[2] end
  if b[3] > 0 and err_call == key and err_call_streak >= b[3] then return err_call_streak, b[3] end
  return nil
end

-- The count and limit a breaker denies with, or nil when it allows.
local function check(b)
  local kind = b[1]
  if kind == 'cap' then
    if b[2] > 0 and calls >= b[2] then return calls, b[2] end
  elseif kind == 'duplicate' then
    return check_window(b)
  elseif kind == 'repeat' then
    local n = b[3] == 1 and stale or streak
    if last == digest and n >= b[2] then return n + 1, b[2] end
  elseif kind == 'same_error' then
    return check_same_error(b)
  end
  return nil
end

local function touch()
  for _, k in ipairs(KEYS) do redis.call('PEXPIRE', k, ttl) end
end

local function deny(kind, count, limit)
  local first = redis.call('HSETNX', state, 'first:' .. kind, 1)
  if kind == 'repeat' then
    redis.call('HSET', state, 'denials', denials + 1, 'streak', streak + 1, 'stale', stale + 1)
  else
    redis.call('HSET', state, 'denials', denials + 1)
  end
  touch()
  return {kind, count, limit, first, denials + 1}
end

-- Append the call's key to the window; once full, overwrite the oldest entry.
local function push()
  local full = size * 8
  if #ring + 8 < full then
    redis.call('APPEND', win, key)
    return
  elseif #ring + 8 == full then  -- a fresh string: APPEND's spare capacity would stay allocated
    redis.call('SET', win, ring .. key, 'KEEPTTL')
    return
  end
  if #ring > full then  -- the window was made shorter since this agent's last call
    redis.call('SET', win, string.sub(ring, 1, full))
  end
  pos = pos % size
  redis.call('SETRANGE', win, pos * 8, key)
  pos = pos + 1
end

local function record_window()
  push()
  if run_key == key then
    run_len = run_len + 1
  else
    run_key, run_len, run_stale = key, 1, 0
    table.insert(changes, 'rr') table.insert(changes, '')
  end
end

local function record_repeat()
  if last == digest then
    streak, stale = streak + 1, stale + 1
  else
    streak, stale, last = 1, 1, digest
    table.insert(changes, 'sres') table.insert(changes, '')
  end
end

-- The aligned position of the record of `entry` in a string of `width`-byte records, or nil.
local function find_record(records, entry, width)
  local i = 1
  while true do
    local p = string.find(records, entry, i, true)
    if not p then return nil end
    if (p - 1) % width == 0 then return p end
    i = p + 1
  end
end

-- The allowed call now awaits its result: the newest call only until the agent's first
-- result, then the last PENDING calls (key and window index), oldest dropped first.
local function await_result(index)
  if puts == 0 then
    table.insert(changes, 'aw') table.insert(changes, key)
    table.insert(changes, 'awi') table.insert(changes, index)
    return
  end
  local p = find_record(pending, key, RECORD)
  if p then pending = string.sub(pending, 1, p - 1) .. string.sub(pending, p + RECORD) end
  pending = pending .. key .. string.format('%012d', index)
  if #pending > PENDING * RECORD then pending = string.sub(pending, RECORD + 1) end
  table.insert(changes, 'pend') table.insert(changes, pending)
end

for _, b in ipairs(breakers) do
  local count, limit = check(b)
  if count then return deny(b[1], count, limit) end
end
for _, b in ipairs(breakers) do
  if b[1] == 'duplicate' then record_window() elseif b[1] == 'repeat' then record_repeat() end
end
await_result(calls)
redis.call('HSET', state, 'calls', calls + 1, 'denials', 0, 'pos', pos, 'streak', streak, 'stale', stale,
  'digest', last or '', 'rk', run_key or '', 'rl', run_len, 'rs', run_stale, unpack(changes))
touch()
return 0
