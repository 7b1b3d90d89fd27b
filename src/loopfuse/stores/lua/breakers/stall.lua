-- loopfuse: the stall breaker (breakers/stall.py), run by decide.lua and observe.lua.
--
-- Settings: {'stall', limit, error_limit, window}. Its state lives in the agent's hash (KEYS[1]):
--   st:n       how many new outcomes the agent has had      st:u   how many results it observed
--   st:s:<o>   outcome o was seen lately                    st:l:<k>  call k's latest outcome
--   st:p:<k><o>  count, failed (0/1) and the st:n of the last time call k gave outcome o
-- each value led by the 12-digit number of the result that wrote it. Like RecentDigests, each
-- table keeps what its last `window` writes wrote: its ring st:<t>r holds the entries written.
-- fields: st:n st:u
-- ops: check observe

local function stall_get(t, entry)
  local v = redis.call('HGET', KEYS[1], 'st:' .. t .. ':' .. entry)
  return v and string.sub(v, 13)
end

local function stall_pair(v)  -- count, failed, novelty stamp
  local count, failed, stamp = string.match(v, '^(%d+),(%d),(%d+)$')
  return tonumber(count), failed == '1', tonumber(stamp)
end

UNITS['stall'] = function(op, b, x)
  if op == 'check' then
    local outcome = stall_get('l', x.key)
    local v = outcome and stall_get('p', x.key .. outcome)
    if not v then return nil end
    local count, failed, stamp = stall_pair(v)
    if stamp ~= (tonumber(F['st:n']) or 0) then return nil end
    local limit = failed and b[3] or b[2]
    if limit > 0 and count >= limit then return count, limit, failed and 'error' or '' end
  elseif op == 'observe' then
    -- Defined here, not with the other helpers: a check without results pays for no closure.
    local function stall_put(t, width, entry, payload, u, size)
      local ring_field = 'st:' .. t .. 'r'
      local ring = redis.call('HGET', KEYS[1], ring_field) or ''
      local at = ((u - 1) % size) * width
      if #ring >= size * width then
        local oldest = string.sub(ring, at + 1, at + width)
        local field = 'st:' .. t .. ':' .. oldest
        local v = redis.call('HGET', KEYS[1], field)
        if v and tonumber(string.sub(v, 1, 12)) == u - size then redis.call('HDEL', KEYS[1], field) end
        ring = string.sub(ring, 1, at) .. entry .. string.sub(ring, at + width + 1)
      else
        ring = ring .. entry
      end
      redis.call('HSET', KEYS[1], ring_field, ring, 'st:' .. t .. ':' .. entry, string.format('%012d', u) .. payload)
    end
    local size, key, failed = b[4], x.key, x.failed
    local outcome = failed and x.err or x.result
    if outcome == NONE then outcome = string.rep('\0', 7) .. '\1' end
    local novel, u = tonumber(F['st:n']) or 0, (tonumber(F['st:u']) or 0) + 1
    if not stall_get('s', outcome) then novel = novel + 1 end
    stall_put('s', 8, outcome, '1', u, size)
    local v, count = stall_get('p', key .. outcome), 1
    if v then
      local n, _, stamp = stall_pair(v)
      if stamp == novel then count = math.min(n + 1, 65535) end
    end
    stall_put('p', 16, key .. outcome, count .. ',' .. (failed and '1' or '0') .. ',' .. novel, u, size)
    stall_put('l', 8, key, outcome, u, size)
    put('st:n', novel) put('st:u', u)
  end
end
