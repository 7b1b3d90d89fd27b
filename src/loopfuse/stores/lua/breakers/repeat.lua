-- loopfuse: the loop brake (breakers/repeat.py), run by decide.lua and observe.lua.
--
-- Settings: {'repeat', max_repeats, result_aware}. Its state, in the agent's hash (KEYS[1]):
--   digest  the full digest of the agent's latest call      streak  how many in a row made it
--   stale   the same, counted since its result last changed  sres  its latest result
-- fields: digest streak stale sres

UNITS['repeat'] = {
  check = function(b, c)
    local n = tonumber(b[3] == 1 and (F.stale or 0) or F.streak) or 0
    if F.digest == c.digest and n >= b[2] then return n + 1, b[2] end
  end,
  refused = function(b, c)  -- the streak counts its own refusals
    put('streak', (tonumber(F.streak) or 0) + 1)
    put('stale', (tonumber(F.stale) or 0) + 1)
  end,
  record = function(b, c)
    local streak, stale = tonumber(F.streak) or 0, tonumber(F.stale) or 0
    if F.digest == c.digest then
      put('streak', streak + 1, streak) put('stale', stale + 1, stale)
    else
      put('digest', c.digest, F.digest) put('streak', 1, streak) put('stale', 1, stale)
      put('sres', '', F.sres or '')
    end
  end,
  observe = function(b, r)
    if r.digest ~= F.digest then return end
    if F.sres and F.sres ~= '' and r.result ~= F.sres then put('stale', 1) end
    put('sres', r.result)
  end,
}
