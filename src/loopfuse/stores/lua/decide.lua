-- loopfuse: evaluate every breaker of one guard for one agent's call, atomically.
--
-- KEYS[1]  the agent's state hash: calls, denials, streak, digest, pos, first:<kind>
-- KEYS[2]  the agent's window: a string of 8-byte call keys, a ring of at most ARGV[3] entries
-- ARGV[1]  the call's window key (8 bytes)      ARGV[2]  the call's full digest (32 bytes)
-- ARGV[3]  window length (entries)              ARGV[4]  idle expiry in milliseconds
-- ARGV[5..] breaker kind, limit pairs in the guard's order: cap | duplicate | repeat
--
-- Returns 0 when the call is allowed and recorded, else {kind, count, limit, first, denials in a row}.
-- A denied call is recorded by no breaker; the loop brake's streak counts its own refusals.

local state, win = KEYS[1], KEYS[2]
local key, digest = ARGV[1], ARGV[2]
local size, ttl = tonumber(ARGV[3]), tonumber(ARGV[4])

local function touch()
  redis.call('PEXPIRE', state, ttl)
  if redis.call('EXISTS', win) == 1 then redis.call('PEXPIRE', win, ttl) end
end

local function count_in(ring)
  local n, i = 0, 1
  while true do
    local p = string.find(ring, key, i, true)
    if not p then return n end
    if (p - 1) % 8 == 0 then n, i = n + 1, p + 8 else i = p + 1 end
  end
end

local f = redis.call('HMGET', state, 'calls', 'streak', 'digest')
local calls, streak, last = tonumber(f[1]) or 0, tonumber(f[2]) or 0, f[3]
local ring

local function check(kind, limit)
  if kind == 'cap' then
    if limit > 0 and calls >= limit then return calls end
  elseif kind == 'duplicate' then
    ring = ring or (redis.call('GET', win) or '')
    local n = count_in(ring)
    if n >= limit then return n end
  elseif kind == 'repeat' then
    if last == digest and streak >= limit then
      redis.call('HINCRBY', state, 'streak', 1)
      return streak + 1
    end
  end
  return nil
end

local function deny(kind, count, limit)
  local denials = redis.call('HINCRBY', state, 'denials', 1)
  local first = redis.call('HSETNX', state, 'first:' .. kind, 1)
  touch()
  return {kind, count, limit, first, denials}
end

local function push()
  ring = ring or (redis.call('GET', win) or '')
  local full = size * 8
  if #ring < full then
    redis.call('APPEND', win, key)
    return
  end
  if #ring > full then
    redis.call('SET', win, string.sub(ring, #ring - full + 1))
  end
  local pos = (tonumber(redis.call('HGET', state, 'pos')) or 0) % size
  redis.call('SETRANGE', win, pos * 8, key)
  redis.call('HSET', state, 'pos', (pos + 1) % size)
end

local function record(kind)
  if kind == 'duplicate' then
    push()
  elseif kind == 'repeat' then
    if last == digest then
      redis.call('HINCRBY', state, 'streak', 1)
    else
      redis.call('HSET', state, 'digest', digest, 'streak', 1)
    end
  end
end

for i = 5, #ARGV, 2 do
  local kind, limit = ARGV[i], tonumber(ARGV[i + 1])
  local count = check(kind, limit)
  if count then return deny(kind, count, limit) end
end
redis.call('HSET', state, 'calls', calls + 1, 'denials', 0)
for i = 5, #ARGV, 2 do record(ARGV[i]) end
touch()
return 0
