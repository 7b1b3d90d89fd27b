-- loopfuse: the end of a flush, after pending.lua applied the held results: write the agent's
-- state and refresh its expiry (a check does it in decide.lua). Returns how many results counted.
answered(counted)
save()
return counted
