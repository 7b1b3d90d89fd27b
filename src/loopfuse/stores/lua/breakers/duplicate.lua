-- loopfuse: the duplicate window (breakers/duplicate.py), run by decide.lua and observe.lua.
--
-- Settings: {'duplicate', result_aware, same_result_limit, progress_limit}; a check sends the
-- window limit for its call without and with a known result (decide.lua ARGV[4], ARGV[5]).
-- Its state, in the agent's hash (KEYS[1]):
--   w    the window: 8-byte entries (call keys, or pair keys of a call and its result once
--        known), a ring of at most `size` entries, the newest at `pos` once full
--   pos  where the next entry goes once the ring is full
--   rk   the key of the run of one call in a row (a thought between leaves it)      rl  its length
--   rs   how many of its results in a row were the same      rr  its latest result
--   dn   the window index of the newest successful call of an edit tool, or finding (observe.lua's
--        r.found), new to the window (-1: none yet): a successful re-run after it of a call that
--        returned the same result before it is entered as its re-run key, which no limit counts
--        (breakers/_rerun.py)
-- and it reads the latest result of each recent call key (lr: observe.lua keeps it).
-- fields: w pos rk rl rs rr lr dn
-- ops: check record observe

UNITS['duplicate'] = function(op, b, x)
  if op == 'check' then
    local key, ring = x.key, F.w or ''
    local n, pair, limit = count_in(ring, key), nil, tonumber(ARGV[4])
    if b[2] == 1 and x.puts > 0 then  -- the pair key of this call's latest result, when known
      local p = find_record(F.lr or '', key, 16)
      pair = p and string.sub(F.lr, p + 8, p + 15)
    end
    if pair then n, limit = n + count_in(ring, pair), tonumber(ARGV[5]) end
    if b.warn then limit = math.min(limit, b.warn) end
    if n >= limit then return n, limit, pair and 'result' or 'window' end
    if not pair or F.rk ~= key then return nil end
    local run_len, run_stale = tonumber(F.rl) or 0, tonumber(F.rs) or 0
    if b[3] > 0 and run_stale >= b[3] then return run_stale, b[3], 'same_result' end
    if b[4] > 0 and run_len >= b[4] then return run_len, b[4], 'progress' end
  elseif op == 'record' then
    -- Append the call's key to the window; once full, overwrite the oldest entry.
    local key, ring, full, pos = x.key, F.w or '', size * 8, tonumber(F.pos) or 0
    if #ring > full then ring = string.sub(ring, 1, full) end  -- the window was made shorter
    if #ring < full then
      put('w', ring .. key)
    else
      put('w', ring_set(ring, pos % size, key))
      put('pos', pos % size + 1, pos)
    end
    local run_len = tonumber(F.rl) or 0
    if F.rk == key then
      put('rl', run_len + 1, run_len)
    elseif x.puts == 0 or not x.note then  -- a new run (a thought leaves it, once results come)
      put('rk', key, F.rk) put('rl', 1, run_len) put('rs', 0, tonumber(F.rs) or 0) put('rr', '', F.rr or '')
    end
  elseif op == 'observe' and b[2] == 1 then
    -- Re-key the call's window entry by its result (or re-run key), and follow the run of this call's results.
    local ring = F.w or ''
    local age = x.calls - 1 - x.index
    if age >= 0 and age < #ring / 8 then
      local edited = tonumber(F.dn) or -1
      local entry, now = settled_entry(ring, x.index, x.calls, size, x.pair, x.rerun, x, edited, x.found)
      put('w', ring_set(ring, x.index % size, entry))
      put('dn', now, edited)
    end
    if x.key == F.rk then
      local same = tonumber(F.rs) or 0
      put('rs', x.result == F.rr and same + 1 or 1, same)
      put('rr', x.result, F.rr)
    end
  end
end
