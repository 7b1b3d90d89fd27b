-- loopfuse: the call cap (breakers/cap.py), run by decide.lua.
--
-- Settings: {'cap', limit}. It reads the driver's count of the agent's allowed calls.

UNITS['cap'] = {
  check = function(b, c)
    if b[2] > 0 and c.calls >= b[2] then return c.calls, b[2] end
  end,
}
