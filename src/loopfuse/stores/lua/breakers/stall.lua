-- loopfuse: the stall breaker (breakers/stall.py), run by decide.lua and observe.lua.
--
-- Settings: {'stall', limit, error_limit, window, tool_error_limit}. Its state, in the agent's hash (KEYS[1]):
--   st:n  how many new outcomes the agent has had (an outcome not seen lately, or a successful call
--         of an edit tool, observe.lua's r.edit, not made lately)
-- and a table of what its last `window` updates wrote (one update per result observed), as
-- records, the newest first:
--   st:p  per call and outcome: call key, outcome, failed (0/1), count (5 digits) and the st:n
--         of the last time that call gave that outcome (12 digits): STALL_PAIR bytes. A call's
--         first record is its latest outcome's, and its outcomes are the ones seen lately.
-- and the latest result's streak, whose next call it refuses:
--   st:t  '<calls>:<denials in a row>:' when it came, then failed (0/1) and its count
-- and per tool (decide.lua's ARGV[3], a batch tool's identical call), as 8 hex digits of its
-- sha1, one more table of its failures' updates, its first record its latest error's:
--   st:tp  per tool and error: tool, result digest (the whole error, numbers kept), count (5
--          digits), st:n then (12 digits): TOOL_PAIR bytes
-- and the same per near-duplicate key (decide.lua's ARGV[6], observe.lua's r.near), when the
-- guard computes them (its near_duplicate is on):
--   st:np  per near key and error, as st:tp
-- fields: st:n st:p st:t st:tp st:np denials
-- ops: check observe

local STALL_PAIR, TOOL_PAIR = 34, 33

-- The count in `pairs_` (st:tp or st:np) of `id`'s latest error when nothing new came since it,
-- else nil.
local function failing_count(pairs_, id)
  local q = find_record(pairs_, id, TOOL_PAIR)
  if q and string.sub(pairs_, q + 21, q + 32) == string.format('%012d', tonumber(F['st:n']) or 0) then
    return tonumber(string.sub(pairs_, q + 16, q + 20))
  end
end

-- `entry` (an id and its error) once more: its count, with nothing new in between (stamp:
-- st:n now), and its record for the pairs table.
local function failing_counted(pairs_, entry, stamp)
  local q, count = find_record(pairs_, entry, TOOL_PAIR), 1
  if q and string.sub(pairs_, q + 21, q + 32) == stamp then
    count = math.min(tonumber(string.sub(pairs_, q + 16, q + 20)) + 1, 65535)
  end
  return count, entry .. string.format('%05d', count) .. stamp
end

UNITS['stall'] = function(op, b, x)
  if op == 'check' then
    -- The identical call, its outcome repeated with nothing new in between.
    local pairs_ = F['st:p']
    local q = pairs_ and find_record(pairs_, x.key, STALL_PAIR)
    if q and string.sub(pairs_, q + 22, q + 33) == string.format('%012d', tonumber(F['st:n']) or 0) then
      local failed, count = string.sub(pairs_, q + 16, q + 16) == '1', tonumber(string.sub(pairs_, q + 17, q + 21))
      local limit = failed and b[3] or b[2]
      if limit > 0 and count >= limit then return count, limit, failed and 'error' or '' end
    end
    -- A call equal but for ids and numbers to calls whose latest error repeated, nothing new between.
    local near = ARGV[6]
    if b[3] > 0 and near and F['st:np'] then
      if near == '' then return RESEND end  -- (st:np: the agent has had results)
      local count = near ~= NONE and failing_count(F['st:np'], near)
      if count and count >= b[3] then return count, b[3], 'similar' end
    end
    -- Any call to a tool whose latest error repeated with nothing new in between.
    if b[5] > 0 and F['st:tp'] then
      local count = failing_count(F['st:tp'], string.sub(redis.sha1hex(x.tool), 1, 8))
      if count and count >= b[5] then return count, b[5], 'tool' end
    end
    -- Any call right after the result that completed a streak (no call made or denied since).
    local t = F['st:t']
    if not t then return nil end
    local stamp = x.calls .. ':' .. (tonumber(F.denials) or 0) .. ':'
    if string.sub(t, 1, #stamp) ~= stamp then return nil end
    local failed, count = string.sub(t, #stamp + 1, #stamp + 1) == '1', tonumber(string.sub(t, #stamp + 2))
    local limit = failed and b[3] or b[2]
    if limit > 0 and count >= limit then return count, limit, failed and 'after_error' or 'after' end
  elseif op == 'observe' then
    local size, key, failed = b[4], x.key, x.failed
    local outcome = failed and x.err or x.result
    if outcome == NONE then outcome = string.rep('\0', 7) .. '\1' end
    local novel, pairs_, entry = tonumber(F['st:n']) or 0, F['st:p'] or '', key .. outcome
    if (not x.note and not find_record(pairs_, outcome, STALL_PAIR, 8))  -- not seen lately, nor a note
      or (x.edit and not failed and not find_record(pairs_, key, STALL_PAIR)) then  -- an edit not made lately
      novel = novel + 1
    end
    local stamp, count = string.format('%012d', novel), 1
    local q = find_record(pairs_, entry, STALL_PAIR)
    if q and string.sub(pairs_, q + 22, q + 33) == stamp then
      count = math.min(tonumber(string.sub(pairs_, q + 17, q + 21)) + 1, 65535)
    end
    local pair = entry .. (failed and '1' or '0') .. string.format('%05d', count) .. stamp
    put('st:p', newest_first(pairs_, pair, STALL_PAIR, size))
    local result = x.result == NONE and string.rep('\0', 7) .. '\1' or x.result
    if failed and b[3] > 0 and x.near ~= NONE then
      local near_pairs, near_entry = F['st:np'] or '', x.near .. result
      local near_count, record = failing_counted(near_pairs, near_entry, stamp)
      put('st:np', newest_first(near_pairs, record, TOOL_PAIR, size))
      count = math.max(count, near_count)
    end
    if failed and b[5] > 0 then
      local tool_pairs, tool_entry = F['st:tp'] or '', string.sub(redis.sha1hex(x.tool), 1, 8) .. result
      local _, record = failing_counted(tool_pairs, tool_entry, stamp)
      put('st:tp', newest_first(tool_pairs, record, TOOL_PAIR, size))
    end
    put('st:t', x.calls .. ':' .. (tonumber(F.denials) or 0) .. ':' .. (failed and '1' or '0') .. count, F['st:t'])
    put('st:n', novel, tonumber(F['st:n']) or 0)
  end
end
