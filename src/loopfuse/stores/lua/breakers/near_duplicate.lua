-- loopfuse: near_duplicate (breakers/near_duplicate.py), run by decide.lua and observe.lua.
--
-- Settings: {'near_duplicate', window, result_aware, only_with_results}; a check sends the call's
-- near-duplicate key and the limit for its tool (decide.lua ARGV[6], ARGV[7]).
-- Its own window KEYS[5] (a ring of `window` 8-byte near keys, or pair keys of a near key and its
-- result once known: the entry pushed as the i-th sits at i % window), and the latest result of
-- each recent near key, KEYS[6], bounded by the ring KEYS[7] (as KEYS[3] and KEYS[4]). In the
-- agent's hash (KEYS[1]):
--   np  how many near keys were pushed     nq  how many results were remembered
--   npend  the pushed entries awaiting their result (records of RECORD bytes)
-- fields: np nq npend
-- ops: check record observe touch

local near_ring = ''  -- the window, as the check read it

UNITS['near_duplicate'] = function(op, b, x)
  local near, pushed = ARGV[6], tonumber(F.np) or 0
  if op == 'check' then
    if near == '' then
      if x.puts > 0 then return RESEND end  -- with results the key is needed (to record it, at least)
      return nil
    end
    if pushed == 0 or near == NONE then return nil end
    near_ring = redis.call('GET', KEYS[5]) or ''
    local n = b[4] == 1 and 0 or count_in(near_ring, near)
    if b[3] == 1 and (tonumber(F.nq) or 0) > 0 then  -- entries that returned the key's latest result
      local v = redis.call('HGET', KEYS[6], near)
      if v then n = n + count_in(near_ring, string.sub(v, 1, 8)) end
    end
    local limit = tonumber(ARGV[7])
    if b.warn then limit = math.min(limit, b.warn) end
    if n >= limit then return n, limit end
  elseif op == 'record' then
    if near == '' or near == NONE or (b[4] == 1 and x.puts == 0) then return end
    local full = b[2] * 8
    if #near_ring > full then  -- the window was made shorter since this agent's last call
      near_ring = string.sub(near_ring, 1, full)
      redis.call('SET', KEYS[5], near_ring)
    end
    if #near_ring + 8 < full then
      redis.call('APPEND', KEYS[5], near)
    elseif #near_ring + 8 == full then
      redis.call('SET', KEYS[5], near_ring .. near)
    else
      redis.call('SETRANGE', KEYS[5], (pushed % b[2]) * 8, near)
    end
    if b[3] == 1 or b[4] == 1 then
      put('npend', awaiting(F.npend or '', near, pushed, math.min(b[2], 32)), F.npend)
    end
    F.np = pushed + 1
    put('np', pushed + 1, pushed)
  elseif op == 'observe' then
    -- Re-key the latest awaiting entry of this near key, remember its result.
    near = x.near
    if pushed == 0 or near == NONE then return end
    local records = F.npend or ''
    local p = find_record(records, near, RECORD)
    if p then
      local index = tonumber(string.sub(records, p + 8, p + RECORD - 1))
      put('npend', string.sub(records, 1, p - 1) .. string.sub(records, p + RECORD))
      local age = pushed - 1 - index
      if age >= 0 and age < math.min(pushed, b[2]) then
        redis.call('SETRANGE', KEYS[5], (index % b[2]) * 8, x.near_pair)
      end
    end
    put('nq', remember(KEYS[6], KEYS[7], near, x.near_pair, tonumber(F.nq) or 0, b[2]))
  elseif op == 'touch' then
    if pushed > 0 then redis.call('PEXPIRE', KEYS[5], ttl) end
    if (tonumber(F.nq) or 0) > 0 then
      redis.call('PEXPIRE', KEYS[6], ttl)
      redis.call('PEXPIRE', KEYS[7], ttl)
    end
  end
end
