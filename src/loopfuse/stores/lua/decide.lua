-- loopfuse: evaluate every breaker of one guard for one agent's call, atomically.
--
-- The store prepends one line binding the guard's settings (so a check sends only its call):
--   local size, ttl, breakers = <window length>, <idle expiry ms>, {<kind>, <limit>, ...}
-- with the breakers in the guard's order, each kind one of cap | duplicate | repeat.
--
-- KEYS[1]  the agent's state hash: calls, denials, streak, digest, pos, first:<kind>
-- KEYS[2]  the agent's window: a string of 8-byte call keys, a ring of at most size entries
-- ARGV[1]  the call's window key (8 bytes)      ARGV[2]  the call's full digest (32 bytes)
--
-- Returns 0 when the call is allowed and recorded, else {kind, count, limit, first, denials in a row}.
-- A denied call is recorded by no breaker; the loop brake's streak counts its own refusals.

local state, win = KEYS[1], KEYS[2]
local key, digest = ARGV[1], ARGV[2]

local f = redis.call('HMGET', state, 'calls', 'streak', 'digest', 'denials', 'pos')
local calls, streak, last = tonumber(f[1]) or 0, tonumber(f[2]) or 0, f[3]
local denials, pos = tonumber(f[4]) or 0, tonumber(f[5]) or 0
local ring

local function count_in()
  local n, i = 0, 1
  while true do
    local p = string.find(ring, key, i, true)
    if not p then return n end
    if (p - 1) % 8 == 0 then n, i = n + 1, p + 8 else i = p + 1 end
  end
end

-- The count a breaker denies with, or nil when it allows.
local function check(kind, limit)
  if kind == 'cap' then
    if limit > 0 and calls >= limit then return calls end
  elseif kind == 'duplicate' then
    ring = redis.call('GET', win) or ''
    local n = count_in()
    if n >= limit then return n end
  elseif kind == 'repeat' then
    if last == digest and streak >= limit then return streak + 1 end
  end
  return nil
end

local function touch()
  redis.call('PEXPIRE', state, ttl)
  redis.call('PEXPIRE', win, ttl)
end

local function deny(kind, count, limit)
  local first = redis.call('HSETNX', state, 'first:' .. kind, 1)
  if kind == 'repeat' then
    redis.call('HSET', state, 'denials', denials + 1, 'streak', streak + 1)
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

for i = 1, #breakers, 2 do
  local kind, limit = breakers[i], breakers[i + 1]
  local count = check(kind, limit)
  if count then return deny(kind, count, limit) end
end
for i = 1, #breakers, 2 do
  local kind = breakers[i]
  if kind == 'duplicate' then
    push()
  elseif kind == 'repeat' then
    if last == digest then streak = streak + 1 else streak, last = 1, digest end
  end
end
redis.call('HSET', state, 'calls', calls + 1, 'denials', 0, 'pos', pos, 'streak', streak, 'digest', last or '')
touch()
return 0
