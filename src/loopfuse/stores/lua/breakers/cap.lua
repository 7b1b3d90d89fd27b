-- loopfuse: the call cap (breakers/cap.py), run by decide.lua.
--
-- Settings: {'cap', limit}. It reads the driver's count of the agent's allowed calls.
-- ops: check

UNITS['cap'] = function(op, b, c)
  if op == 'check' and b[2] > 0 and c.calls >= b[2] then return c.calls, b[2] end
end
