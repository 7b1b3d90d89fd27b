-- loopfuse: the loop brake (breakers/repeat.py), run by decide.lua and observe.lua.
--
-- Settings: {'repeat', max_repeats, result_aware}. Its state, in the agent's hash (KEYS[1]):
--   digest  the full digest of the agent's latest call      streak  how many in a row made it
--   stale   the same, counted since its result last changed  sres  its latest result
-- fields: digest streak stale sres
-- ops: check refused record observe

UNITS['repeat'] = function(op, b, x)
  local streak, stale = tonumber(F.streak) or 0, tonumber(F.stale) or 0
  if op == 'check' then
    local n = b[3] == 1 and stale or streak
    if F.digest == x.digest and n >= b[2] then return n + 1, b[2] end
  elseif op == 'refused' then  -- the streak counts its own refusals
    put('streak', streak + 1) put('stale', stale + 1)
  elseif op == 'record' then
    if F.digest == x.digest then
      put('streak', streak + 1, streak) put('stale', stale + 1, stale)
    else
      put('digest', x.digest, F.digest) put('streak', 1, streak) put('stale', 1, stale)
      put('sres', '', F.sres or '')
    end
  elseif op == 'observe' and x.digest == F.digest then
    if F.sres and F.sres ~= '' and x.result ~= F.sres then put('stale', 1, stale) end
    put('sres', x.result, F.sres)
  end
end
