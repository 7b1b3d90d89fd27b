-- loopfuse: the cycle breaker (breakers/cycle.py), run by decide.lua and observe.lua.
--
-- Settings: {'cycle', max_period, min_repeats, result_aware, only_with_results}. Its state, in the
-- agent's hash (KEYS[1]):
--   ch  the last max_period + 1 calls' keys        cr  their results (NONE while unknown; ''
--       while all are)                             cm  its match counts (cycle_matches)
-- fields: ch cr cm
-- ops: check record observe

-- The match counts m[2..k], stored as "m2,m3,...,mk", or '' when all are 0.
local function cycle_matches(text, k)
  local m, p = {}, 2
  if text then
    for v in string.gmatch(text, '%d+') do
      m[p], p = tonumber(v), p + 1
    end
  end
  for q = p, k do m[q] = 0 end
  return m
end

local function joined_matches(m, k)
  for p = 2, k do
    if m[p] ~= 0 then return table.concat(m, ',', 2, k) end
  end
  return ''
end

UNITS['cycle'] = function(op, b, x)
  local history, k = F.ch or '', b[2]
  local n = #history / 8
  if op == 'check' then
    -- For each period p, how many trailing calls repeat the call p before them.
    for p = 2, math.min(k, n) do
      local at = (n - p) * 8
      if string.sub(history, at + 1, at + 8) == x.key then
        x.matches = x.matches or cycle_matches(F.cm, k)  -- kept on the call for its record
        local run = x.matches[p] + 1
        if run > p * (b[3] - 1) then
          -- Judged when the last p calls are distinct and, where required, all have known results.
          local seen, outcomes, judged = {}, F.cr or '', true
          for i = 1, p do
            local at_i = (n - i) * 8
            local entry, outcome = string.sub(history, at_i + 1, at_i + 8), string.sub(outcomes, at_i + 1, at_i + 8)
            if seen[entry] or (b[5] == 1 and (outcome == '' or outcome == NONE)) then
              judged = false
              break
            end
            seen[entry] = true
          end
          if judged then return math.floor((run - 1 + p) / p), b[3] end
        end
      end
    end
  elseif op == 'record' and (b[5] == 0 or x.puts > 0) then  -- only_with_results: from the first result
    -- The match counts, then the last k + 1 calls, their results unknown (NONE) until reported.
    local matches = x.matches or cycle_matches(F.cm, k)
    for p = 2, k do
      local at = (n - p) * 8
      matches[p] = (n >= p and string.sub(history, at + 1, at + 8) == x.key) and matches[p] + 1 or 0
    end
    local keep, calls_now = (k + 1) * 8, history .. x.key
    if #calls_now > keep then calls_now = string.sub(calls_now, -keep) end
    put('ch', calls_now, F.ch)
    if (F.cr or '') ~= '' then put('cr', string.sub(F.cr .. NONE, -#calls_now)) end
    put('cm', joined_matches(matches, k), F.cm or '')
  elseif op == 'observe' then
    -- The newest call's result; a result unlike the call's p before it breaks period p.
    if history == '' and x.puts == 0 and b[5] == 1 then  -- the agent's first result: its call,
      history, n = x.key, 1                                -- the newest, starts the tracked calls
      put('ch', history)
    end
    if b[4] ~= 1 or n == 0 or string.sub(history, -8) ~= x.key then return end
    local outcomes = F.cr or ''
    if outcomes == '' then outcomes = string.rep(NONE, n) end  -- no result known yet
    outcomes = string.sub(outcomes, 1, -9) .. x.result
    put('cr', outcomes)
    local matches = cycle_matches(F.cm, k)
    for p = 2, math.min(k, n - 1) do
      local at = (n - 1 - p) * 8
      local earlier = string.sub(outcomes, at + 1, at + 8)
      if earlier ~= NONE and earlier ~= x.result then matches[p] = 0 end
    end
    put('cm', joined_matches(matches, k), F.cm or '')
  end
end
