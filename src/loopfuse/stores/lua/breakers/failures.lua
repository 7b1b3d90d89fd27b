-- loopfuse: the failures breaker (breakers/failures.py), run by decide.lua and observe.lua.
--
-- Settings: {'failures', limit}. Its state, in the agent's hash (KEYS[1]):
--   fs  the agent's failures in a row
--   ft  '<calls>:<denials in a row>' when the latest of them came
-- fields: fs ft denials
-- ops: check observe

UNITS['failures'] = function(op, b, x)
  if op == 'check' then
    local streak = tonumber(F.fs) or 0
    if streak >= b[2] and F.ft == x.calls .. ':' .. (tonumber(F.denials) or 0) then return streak, b[2] end
  elseif op == 'observe' then
    if x.failed then
      put('fs', math.min((tonumber(F.fs) or 0) + 1, 65535))
      put('ft', x.calls .. ':' .. (tonumber(F.denials) or 0), F.ft)
    else
      put('fs', 0, tonumber(F.fs) or 0) put('ft', '', F.ft or '')
    end
  end
end
