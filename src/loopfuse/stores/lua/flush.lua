-- loopfuse: the end of a flush, after pending.lua applied the held results: refresh the expiry
-- of the agent's keys (a check refreshes them in decide.lua). Returns how many results counted.
for i = 1, #KEYS do redis.call('PEXPIRE', KEYS[i], ttl) end
return counted
