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
  'rk', 'rl', 'rs', 'rr', 'sres', 'et', 'es', 'ec', 'ecs', 'pend', 'aw')
local calls, streak, last = tonumber(f[1]) or 0, tonumber(f[2]) or 0, f[3]
local denials, pos, stale, puts = tonumber(f[4]) or 0, tonumber(f[5]) or 0, tonumber(f[6]) or 0, tonumber(f[7]) or 0
local run_key, run_len, run_stale = f[8], tonumber(f[9]) or 0, tonumber(f[10]) or 0
local err_tool, err_streak, err_call, err_call_streak = f[13], tonumber(f[14]) or 0, f[15], tonumber(f[16]) or 0
local ring

-- Few closures on purpose: the script body runs on every check, and each costs time.

-- How many of the 8-byte entries of `ring` equal `entry`.
local function count_in(entry)
  local n, i = 0, 1
  while true do
    local p = string.find(ring, entry, i, true)
    if not p then return n end
    if (p - 1) % 8 == 0 then n, i = n + 1, p + 8 else i = p + 1 end
  end
end

-- PEXPIRE costs about 1.5 us: the results' keys exist only once the agent reported a result.
local function touch()
  redis.call('PEXPIRE', state, ttl)
  redis.call('PEXPIRE', win, ttl)
  if puts > 0 then
    redis.call('PEXPIRE', latest, ttl)
    redis.call('PEXPIRE', KEYS[4], ttl)
  end
end

-- Evaluate the breakers in order; the first denial wins and records nothing else.
for _, b in ipairs(breakers) do
  local kind, count, limit = b[1], nil, nil
  if kind == 'cap' then
    if b[2] > 0 and calls >= b[2] then count, limit = calls, b[2] end
  elseif kind == 'duplicate' then
    ring = redis.call('GET', win) or ''
    local n, pair = count_in(key), nil
    limit = plain_limit
    if b[2] == 1 and puts > 0 then  -- the pair key of this call's latest result, when known
      local v = redis.call('HGET', latest, key)
      pair = v and string.sub(v, 1, 8)
    end
    if pair then n, limit = n + count_in(pair), result_limit end
    if n >= limit then
      count = n
    elseif pair and run_key == key then
      if b[3] > 0 and run_stale >= b[3] then
        count, limit = run_stale, b[3]
      elseif b[4] > 0 and run_len >= b[4] then
        count, limit = run_len, b[4]
      end
    end
  elseif kind == 'repeat' then
    local n = b[3] == 1 and stale or streak
    if last == digest and n >= b[2] then count, limit = n + 1, b[2] end
  elseif kind == 'same_error' and err_tool == tool then
    if err_streak >= b[2] then
      count, limit = err_streak, b[2]
    elseif b[3] > 0 and err_call == key and err_call_streak >= b[3] then
      count, limit = err_call_streak, b[3]
    end
  end
  if count then
    local first = redis.call('HSETNX', state, 'first:' .. kind, 1)
    if kind == 'repeat' then
      redis.call('HSET', state, 'denials', denials + 1, 'streak', streak + 1, 'stale', stale + 1)
    else
      redis.call('HSET', state, 'denials', denials + 1)
    end
    touch()
    return {kind, count, limit, first, denials + 1}
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
  if b[1] == 'duplicate' then
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
  elseif b[1] == 'repeat' then
    if last == digest then
      put('streak', streak + 1, streak) put('stale', stale + 1, stale)
    else
      put('digest', digest, last) put('streak', 1, streak) put('stale', 1, stale) put('sres', '', f[12] or '')
    end
  end
end
-- The call now awaits its result: until the agent's first result only the newest call
-- (its window index is calls), then the last PENDING calls (key and window index).
if puts == 0 then
  put('aw', key, f[18])
else
  local pending, i = f[17] or '', 1
  while true do
    local p = string.find(pending, key, i, true)
    if not p then break end
    if (p - 1) % RECORD == 0 then
      pending = string.sub(pending, 1, p - 1) .. string.sub(pending, p + RECORD)
      break
    end
    i = p + 1
  end
  pending = pending .. key .. string.format('%012d', calls)
  if #pending > PENDING * RECORD then pending = string.sub(pending, RECORD + 1) end
  put('pend', pending, nil)
end
redis.call('HSET', state, unpack(out))
touch()
return 0
