-- loopfuse: the failures breaker (breakers/failures.py), run by decide.lua and observe.lua.
--
-- Settings: {'failures', limit, trials}. Its state, in the agent's hash (KEYS[1]):
--   fs  the agent's failures in a row
--   fn  how many of them were trial calls (made while the breaker was open)
--   ft  '<calls>:<denials in a row>' when the latest of them came
-- fields: fs fn ft denials
-- ops: check observe

UNITS['failures'] = function(op, b, x)
  if op == 'check' then
    local streak = tonumber(F.fs) or 0
    if streak >= b[2] and ((tonumber(F.fn) or 0) >= b[3] or F.ft == x.calls .. ':' .. (tonumber(F.denials) or 0)) then
      return streak, b[2]
    end
  elseif op == 'observe' then
    local streak, trials = tonumber(F.fs) or 0, tonumber(F.fn) or 0
    if x.failed then
      if streak >= b[2] then put('fn', math.min(trials + 1, 65535)) end
      put('fs', math.min(streak + 1, 65535))
      put('ft', x.calls .. ':' .. (tonumber(F.denials) or 0), F.ft)
    else
      put('fs', 0, streak) put('fn', 0, trials) put('ft', '', F.ft or '')
    end
  end
end
