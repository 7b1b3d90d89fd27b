-- loopfuse: evaluate every breaker of one guard for one agent's call, atomically.
--
-- The store prepends one line binding the guard's settings (so a check sends only its call):
--   local size, ttl, breakers = <window length>, <idle expiry ms>, {{<kind>, <setting>...}, ...}
-- with the breakers in the guard's order:
--   {'cap', limit} | {'duplicate', result_aware, same_result_limit, progress_limit}
--   | {'repeat', max_repeats, result_aware} | {'same_error', limit, identical_limit}
--   | {'near_duplicate', window, result_aware, only_with_results}
--   | {'cycle', max_period, min_repeats, result_aware, only_with_results}
-- then common.lua, observe.lua and pending.lua: the results this process held back for the agent
-- (ARGV after the check's own, see pending.lua) are applied first, so the check sees them.
--
-- KEYS[1]  the agent's state hash: calls, denials, pos, the loop brake's streak, the window's
--          run of one call, the run of errors, awaited results, the near-duplicate window's
--          count and awaited results, the cycle's last calls, results and matches, first:<kind>
-- KEYS[2]  the agent's window: a string of 8-byte entries (call keys, or pair keys of a call
--          and its result once known), a ring of at most size entries
-- KEYS[3]  the latest result of each recent call key: key -> pair key .. update number
-- KEYS[4]  the ring of call keys in the order their results arrived (bounds KEYS[3])
-- KEYS[5], KEYS[6], KEYS[7]  the same three for near-duplicate keys (near_duplicate's own window)
-- ARGV[1]  the call's window key (8 bytes)      ARGV[2]  the call's full digest (32 bytes)
-- ARGV[3]  the tool's name                      ARGV[4], ARGV[5]  the window limit for this
--          call without and with a known result (per-tool limits are resolved by the store)
-- ARGV[6]  the call's near-duplicate key: NONE when it has none, '' when the store did not
--          compute it (its guard has seen no result yet)
-- ARGV[7]  the near-duplicate limit for this call's tool
--
-- Returns 0 when the call is allowed and recorded, else {kind, count, limit, first, denials in a row,
-- rule}, rule telling the limit reached apart where a kind has several: 'window' or 'result'
-- (the window count without or with a known result), 'same_result', 'progress', 'identical';
-- '' otherwise;
-- 1, having changed nothing, when the near-duplicate key or the results' keys are needed and were
-- not sent (the agent has results; a store that has seen no result sends only KEYS[1], KEYS[2]
-- and no near-duplicate key): the store sends the call again with them. (A check carrying results
-- always sends everything, having seen results, so this never follows results just applied.)
-- A denied call is recorded by no breaker; the loop brake's streak counts its own refusals.
-- Pair keys and digests are computed by the store: Lua numbers are doubles, so it only compares bytes.

local state, win, latest = KEYS[1], KEYS[2], KEYS[3]
local key, digest, tool = ARGV[1], ARGV[2], ARGV[3]
local plain_limit, result_limit = tonumber(ARGV[4]), tonumber(ARGV[5])
local near, near_limit = ARGV[6], tonumber(ARGV[7])
local PENDING = math.min(size, 32)

local f = redis.call('HMGET', state, 'calls', 'streak', 'digest', 'denials', 'pos', 'stale', 'puts',
  'rk', 'rl', 'rs', 'rr', 'sres', 'et', 'es', 'ec', 'ecs', 'pend', 'aw', 'np', 'nq', 'npend', 'ch', 'cr', 'cm')
local calls, streak, last = tonumber(f[1]) or 0, tonumber(f[2]) or 0, f[3]
local denials, pos, stale, puts = tonumber(f[4]) or 0, tonumber(f[5]) or 0, tonumber(f[6]) or 0, tonumber(f[7]) or 0
local run_key, run_len, run_stale = f[8], tonumber(f[9]) or 0, tonumber(f[10]) or 0
local err_tool, err_streak, err_call, err_call_streak = f[13], tonumber(f[14]) or 0, f[15], tonumber(f[16]) or 0
local near_pushed, near_puts = tonumber(f[19]) or 0, tonumber(f[20]) or 0
if puts > 0 and #KEYS < 7 then return 1 end  -- the agent has results: everything is needed
local history, outcomes, matches = f[22] or '', f[23] or '', nil
local ring, near_ring = nil, ''

-- Few closures on purpose: the script body runs on every check, and each costs time.

-- How many of the 8-byte entries of `entries` equal `entry`.
local function count_in(entries, entry)
  local n, i = 0, 1
  while true do
    local p = string.find(entries, entry, i, true)
    if not p then return n end
    if (p - 1) % 8 == 0 then n, i = n + 1, p + 8 else i = p + 1 end
  end
end

-- Whether the last p calls are distinct and, when required, all have known results.
local function cycle_judged(p, n, need_results)
  local seen = {}
  for i = 1, p do
    local at = (n - i) * 8
    local entry = string.sub(history, at + 1, at + 8)
    if seen[entry] then return false end
    seen[entry] = true
    if need_results then
      local outcome = string.sub(outcomes, at + 1, at + 8)
      if outcome == '' or outcome == NONE then return false end
    end
  end
  return true
end

-- `pending` (records of RECORD bytes) with `entry` awaiting at `index`, at most `bound` records.
local function awaiting(pending, entry, index, bound)
  local p = find_record(pending, entry, RECORD)
  if p then pending = string.sub(pending, 1, p - 1) .. string.sub(pending, p + RECORD) end
  pending = pending .. entry .. string.format('%012d', index)
  if #pending > bound * RECORD then pending = string.sub(pending, RECORD + 1) end
  return pending
end

-- PEXPIRE costs about 1.5 us: the results' and near-duplicate keys exist only once used.
local function touch()
  redis.call('PEXPIRE', state, ttl)
  redis.call('PEXPIRE', win, ttl)
  if puts > 0 then
    redis.call('PEXPIRE', latest, ttl)
    redis.call('PEXPIRE', KEYS[4], ttl)
  end
  if near_pushed > 0 then redis.call('PEXPIRE', KEYS[5], ttl) end
  if near_puts > 0 then
    redis.call('PEXPIRE', KEYS[6], ttl)
    redis.call('PEXPIRE', KEYS[7], ttl)
  end
end

-- Evaluate the breakers in order; the first denial wins and records nothing else. A warner
-- (b.warn set: a breaker's copy at its warn_at, after every breaker) only notes the first
-- warning of an allowed call.
local warning = nil
for _, b in ipairs(breakers) do
  local kind, count, limit, rule = b[1], nil, nil, ''
  if kind == 'cap' then
    if b[2] > 0 and calls >= b[2] then count, limit = calls, b[2] end
  elseif kind == 'duplicate' then
    ring = redis.call('GET', win) or ''
    local n, pair = count_in(ring, key), nil
    limit = plain_limit
    if b[2] == 1 and puts > 0 then  -- the pair key of this call's latest result, when known
      local v = redis.call('HGET', latest, key)
      pair = v and string.sub(v, 1, 8)
    end
    if pair then n, limit = n + count_in(ring, pair), result_limit end
    if b.warn then limit = math.min(limit, b.warn) end
    if n >= limit then
      count, rule = n, pair and 'result' or 'window'
    elseif pair and run_key == key then
      if b[3] > 0 and run_stale >= b[3] then
        count, limit, rule = run_stale, b[3], 'same_result'
      elseif b[4] > 0 and run_len >= b[4] then
        count, limit, rule = run_len, b[4], 'progress'
      end
    end
  elseif kind == 'repeat' then
    local n = b[3] == 1 and stale or streak
    if last == digest and n >= b[2] then count, limit = n + 1, b[2] end
  elseif kind == 'same_error' and err_tool == tool then
    if err_streak >= b[2] then
      count, limit = err_streak, b[2]
    elseif b[3] > 0 and err_call == key and err_call_streak >= b[3] then
      count, limit, rule = err_call_streak, b[3], 'identical'
    end
  elseif kind == 'near_duplicate' then
    if near == '' then
      if puts > 0 then return 1 end  -- with results the key is needed (to record it, at least)
    elseif near_pushed > 0 and near ~= NONE then
      near_ring = redis.call('GET', KEYS[5]) or ''
      local n = b[4] == 1 and 0 or count_in(near_ring, near)
      if b[3] == 1 and near_puts > 0 then  -- entries that returned the key's latest result
        local v = redis.call('HGET', KEYS[6], near)
        if v then n = n + count_in(near_ring, string.sub(v, 1, 8)) end
      end
      local at = b.warn and math.min(near_limit, b.warn) or near_limit
      if n >= at then count, limit = n, at end
    end
  elseif kind == 'cycle' then
    local n, repeats = #history / 8, b[3]
    for p = 2, math.min(b[2], n) do
      local at = (n - p) * 8
      if string.sub(history, at + 1, at + 8) == key then
        matches = matches or cycle_matches(f[24], b[2])
        local run = matches[p] + 1
        if run > p * (repeats - 1) and cycle_judged(p, n, b[5] == 1) then
          count, limit = math.floor((run - 1 + p) / p), repeats
          break
        end
      end
    end
  elseif UNITS[kind] then
    count, limit, rule = UNITS[kind].check(b, key, tool)
    rule = rule or ''
  end
  if count and b.warn then
    warning = warning or {0, kind, count, limit, rule}
  elseif count then
    local first = redis.call('HSETNX', state, 'first:' .. kind, 1)
    if kind == 'repeat' then
      redis.call('HSET', state, 'denials', denials + 1, 'streak', streak + 1, 'stale', stale + 1)
    else
      redis.call('HSET', state, 'denials', denials + 1)
    end
    -- A result of this call reported from now on is the denied one's: the wait ends.
    if puts == 0 then
      if f[18] == key then redis.call('HSET', state, 'aw', '') end
    else
      local p = find_record(f[17] or '', key, RECORD)
      if p then redis.call('HSET', state, 'pend', string.sub(f[17], 1, p - 1) .. string.sub(f[17], p + RECORD)) end
    end
    touch()
    return {kind, count, limit, first, denials + 1, rule}
  end
end

-- Allowed: every breaker records the call. Only the fields that change are written.
local out = {'calls', calls + 1}
local function put(field, value, old)
  if value ~= old then
    out[#out + 1] = field
    out[#out + 1] = value
  end
end
put('denials', 0, denials)
for _, b in ipairs(breakers) do
  local kind = not b.warn and b[1]
  if kind == 'duplicate' then
    -- Append the call's key to the window; once full, overwrite the oldest entry.
    local full = size * 8
    if #ring + 8 < full then
      redis.call('APPEND', win, key)
    elseif #ring + 8 == full then  -- a fresh string: APPEND's spare capacity would stay allocated
      redis.call('SET', win, ring .. key, 'KEEPTTL')
    else
      if #ring > full then  -- the window was made shorter since this agent's last call
        redis.call('SET', win, string.sub(ring, 1, full))
      end
      redis.call('SETRANGE', win, (pos % size) * 8, key)
      put('pos', pos % size + 1, pos)
    end
    if run_key == key then
      put('rl', run_len + 1, run_len)
    else  -- a new run of one call: its results so far are unknown
      put('rk', key, run_key) put('rl', 1, run_len) put('rs', 0, run_stale) put('rr', '', f[11] or '')
    end
  elseif kind == 'repeat' then
    if last == digest then
      put('streak', streak + 1, streak) put('stale', stale + 1, stale)
    else
      put('digest', digest, last) put('streak', 1, streak) put('stale', 1, stale) put('sres', '', f[12] or '')
    end
  elseif kind == 'near_duplicate' and near ~= '' and near ~= NONE and (b[4] == 0 or puts > 0) then
    -- Its own ring of b[2] near keys (the entry pushed as the i-th sits at i % b[2]).
    local n, full = near_pushed, b[2] * 8
    if #near_ring > full then  -- the window was made shorter since this agent's last call
      near_ring = string.sub(near_ring, 1, full)
      redis.call('SET', KEYS[5], near_ring)
    end
    if #near_ring + 8 < full then
      redis.call('APPEND', KEYS[5], near)
    elseif #near_ring + 8 == full then
      redis.call('SET', KEYS[5], near_ring .. near)
    else
      redis.call('SETRANGE', KEYS[5], (n % b[2]) * 8, near)
    end
    if b[3] == 1 or b[4] == 1 then
      put('npend', awaiting(f[21] or '', near, n, math.min(b[2], 32)), f[21])
    end
    near_pushed = n + 1
    put('np', near_pushed, n)
  elseif kind == 'cycle' and (b[5] == 0 or puts > 0) then  -- tracked from the first result on
    -- For each period p, how many trailing calls repeat the call p before them; then the
    -- last b[2] + 1 calls, with their results unknown (NONE) until reported ('' while all are).
    local n, k = #history / 8, b[2]
    matches = matches or cycle_matches(f[24], k)
    for p = 2, k do
      local at = (n - p) * 8
      matches[p] = (n >= p and string.sub(history, at + 1, at + 8) == key) and matches[p] + 1 or 0
    end
    local keep, calls_now = (k + 1) * 8, history .. key
    if #calls_now > keep then calls_now = string.sub(calls_now, -keep) end
    put('ch', calls_now, f[22])
    if outcomes ~= '' then put('cr', string.sub(outcomes .. NONE, -#calls_now), nil) end
    put('cm', joined_matches(matches, k), f[24] or '')
  elseif UNITS[kind] and UNITS[kind].record then
    UNITS[kind].record(b, key)
  end
end
-- The call now awaits its result: until the agent's first result only the newest call
-- (its window index is calls), then the last PENDING calls (key and window index).
if puts == 0 then
  put('aw', key, f[18])
else
  put('pend', awaiting(f[17] or '', key, calls, PENDING), nil)
end
redis.call('HSET', state, unpack(out))
touch()
return warning or 0
