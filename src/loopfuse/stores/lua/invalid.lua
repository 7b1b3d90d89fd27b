-- loopfuse: one more invalid turn for an agent; returns its invalid turns in a row.
-- The streak counts the invalid turns since the agent's last allowed call: `ia` holds the
-- agent's `calls` count when the streak began, and any allowed call since starts it afresh.
-- KEYS[1] the agent's state hash (see decide.lua)   ARGV[1] idle expiry in milliseconds
local f = redis.call('HMGET', KEYS[1], 'calls', 'ia', 'inv')
local calls = f[1] or '0'
local n = 1
if f[2] == calls then n = (tonumber(f[3]) or 0) + 1 end
redis.call('HSET', KEYS[1], 'inv', n, 'ia', calls)
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return n
