-- loopfuse: the duplicate window (breakers/duplicate.py), run by decide.lua and observe.lua.
--
-- Settings: {'duplicate', result_aware, same_result_limit, progress_limit}; a check sends the
-- window limit for its call without and with a known result (decide.lua ARGV[4], ARGV[5]).
-- KEYS[2] is the window: a string of 8-byte entries (call keys, or pair keys of a call and its
-- result once known), a ring of at most `size` entries, the newest at `pos` once full; KEYS[3]
-- the latest result of each recent call key (observe.lua). In the agent's hash (KEYS[1]):
--   pos  where the next entry goes once the ring is full
--   rk   the key of the run of one call in a row      rl  its length
--   rs   how many of its results in a row were the same      rr  its latest result
-- fields: pos rk rl rs rr
-- ops: check record observe

local dup_ring = ''  -- the window, as the check read it

UNITS['duplicate'] = function(op, b, x)
  if op == 'check' then
    local key = x.key
    dup_ring = redis.call('GET', KEYS[2]) or ''
    local n, pair, limit = count_in(dup_ring, key), nil, tonumber(ARGV[4])
    if b[2] == 1 and x.puts > 0 then  -- the pair key of this call's latest result, when known
      local v = redis.call('HGET', KEYS[3], key)
      pair = v and string.sub(v, 1, 8)
    end
    if pair then n, limit = n + count_in(dup_ring, pair), tonumber(ARGV[5]) end
    if b.warn then limit = math.min(limit, b.warn) end
    if n >= limit then return n, limit, pair and 'result' or 'window' end
    if not pair or F.rk ~= key then return nil end
    local run_len, run_stale = tonumber(F.rl) or 0, tonumber(F.rs) or 0
    if b[3] > 0 and run_stale >= b[3] then return run_stale, b[3], 'same_result' end
    if b[4] > 0 and run_len >= b[4] then return run_len, b[4], 'progress' end
  elseif op == 'record' then
    -- Append the call's key to the window; once full, overwrite the oldest entry.
    local key, ring, full, pos = x.key, dup_ring, size * 8, tonumber(F.pos) or 0
    if #ring + 8 < full then
      redis.call('APPEND', KEYS[2], key)
    elseif #ring + 8 == full then  -- a fresh string: APPEND's spare capacity would stay allocated
      redis.call('SET', KEYS[2], ring .. key, 'KEEPTTL')
    else
      if #ring > full then  -- the window was made shorter since this agent's last call
        redis.call('SET', KEYS[2], string.sub(ring, 1, full))
      end
      redis.call('SETRANGE', KEYS[2], (pos % size) * 8, key)
      put('pos', pos % size + 1, pos)
    end
    local run_len = tonumber(F.rl) or 0
    if F.rk == key then
      put('rl', run_len + 1, run_len)
    else  -- a new run of one call: its results so far are unknown
      put('rk', key, F.rk) put('rl', 1, run_len) put('rs', 0, tonumber(F.rs) or 0) put('rr', '', F.rr or '')
    end
  elseif op == 'observe' and b[2] == 1 then
    -- Re-key the call's window entry by its result, and follow the run of this call's results.
    local held = redis.call('STRLEN', KEYS[2]) / 8
    local age = x.calls - 1 - x.index
    if age >= 0 and age < held then redis.call('SETRANGE', KEYS[2], (x.index % size) * 8, x.pair) end
    if x.key == F.rk then
      put('rs', x.result == F.rr and (tonumber(F.rs) or 0) + 1 or 1)
      put('rr', x.result)
    end
  end
end
