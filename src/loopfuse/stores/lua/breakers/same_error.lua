-- loopfuse: same_error (breakers/same_error.py), run by decide.lua and observe.lua.
--
-- Settings: {'same_error', limit, identical_limit}. Its state, in the agent's hash (KEYS[1]):
--   et  the "tool" of the run of errors (decide.lua ARGV[3])   ek  its error digest
--   es  how many in a row     ec  the call key of the latest     ecs  how many in a row of it
-- fields: et ek es ec ecs
-- ops: check observe

UNITS['same_error'] = function(op, b, x)
  if op == 'check' and F.et == x.tool then
    local streak, call_streak = tonumber(F.es) or 0, tonumber(F.ecs) or 0
    if streak >= b[2] then return streak, b[2] end
    if b[3] > 0 and F.ec == x.key and call_streak >= b[3] then return call_streak, b[3], 'identical' end
  elseif op == 'observe' and not x.note then  -- a thought between failures leaves them in a row
    if not x.failed then
      put('et', '', F.et or '') put('ek', '', F.ek or '') put('ec', '', F.ec or '')
      put('es', 0, tonumber(F.es) or 0) put('ecs', 0, tonumber(F.ecs) or 0)
      return
    end
    if x.tool == F.et and x.err == F.ek then
      put('es', (tonumber(F.es) or 0) + 1)
      put('ecs', x.key == F.ec and (tonumber(F.ecs) or 0) + 1 or 1)
    else
      put('et', x.tool, F.et) put('ek', x.err, F.ek) put('es', 1) put('ecs', 1)
    end
    put('ec', x.key, F.ec)
  end
end
