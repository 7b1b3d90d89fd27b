-- loopfuse: near_duplicate (breakers/near_duplicate.py), run by decide.lua and observe.lua.
--
-- Settings: {'near_duplicate', window, result_aware, only_with_results}; a check sends the call's
-- near-duplicate key and the limit for its tool (decide.lua ARGV[6], ARGV[7]).
-- Its state, in the agent's hash (KEYS[1]):
--   nw  its own window: a ring of `window` 8-byte near keys, or pair keys of a near key and its
--       result once known (the entry pushed as the i-th sits at i % window)
--   np  how many near keys were pushed     npend  the pushed entries awaiting their result
--   nl  the latest result of each near key among the last `window` results: records of the
--       near key and the pair key of it and its result, the newest first (as lr, observe.lua)
--   nn  the index of its newest successful edit, or call with no recent result (nl) answering what
--       none of the agent's last results did (ld, observe.lua), new to it (as dn, duplicate.lua)
-- fields: nw np npend nl nn
-- ops: check record observe

UNITS['near_duplicate'] = function(op, b, x)
  local near, pushed = ARGV[6], tonumber(F.np) or 0
  if op == 'check' then
    if near == '' then
      if x.puts > 0 then return RESEND end  -- with results the key is needed (to record it, at least)
      return nil
    end
    if pushed == 0 or near == NONE then return nil end
    local ring = F.nw or ''
    local n = b[4] == 1 and 0 or count_in(ring, near)
    if b[3] == 1 and F.nl then  -- entries that returned the key's latest result
      local p = find_record(F.nl, near, 16)
      if p then n = n + count_in(ring, string.sub(F.nl, p + 8, p + 15)) end
    end
    local limit = tonumber(ARGV[7])
    if b.warn then limit = math.min(limit, b.warn) end
    if n >= limit then return n, limit end
  elseif op == 'record' then
    if near == '' or near == NONE or (b[4] == 1 and x.puts == 0) then return end
    local ring, full = F.nw or '', b[2] * 8
    if #ring > full then ring = string.sub(ring, 1, full) end  -- the window was made shorter
    if #ring < full then
      put('nw', ring .. near)
    else
      put('nw', ring_set(ring, pushed % b[2], near))
    end
    if b[3] == 1 or b[4] == 1 then
      put('npend', awaiting(F.npend or '', near, pushed, math.min(b[2], 32)), F.npend)
    end
    put('np', pushed + 1, pushed)
  elseif op == 'observe' then
    -- Re-key the latest awaiting entry of this near key, remember its result.
    near = x.near
    if pushed == 0 or near == NONE then return end
    local records = F.npend or ''
    local p = find_record(records, near, RECORD)
    if p then
      local index = tonumber(string.sub(records, p + 8, p + RECORD - 1))
      put('npend', string.sub(records, 1, p - 1) .. string.sub(records, p + RECORD))
      local age = pushed - 1 - index
      if age >= 0 and age < math.min(pushed, b[2]) then
        local ring, edited = F.nw or '', tonumber(F.nn) or -1
        local fresh = x.succeeded and not x.edit and not x.note and finding(F.nl or '', near, 16, x.result)
        local entry, now = settled_entry(ring, index, pushed, b[2], x.near_pair, x.near_rerun, x, edited, fresh)
        put('nw', ring_set(ring, index % b[2], entry))
        put('nn', now, edited)
      end
    end
    put('nl', newest_first(F.nl or '', near .. x.near_pair, 16, b[2]))
  end
end
