-- loopfuse: let every breaker of one guard observe the result of one agent's call, atomically.
--
-- Defines observe(r), which pending.lua runs for each result a round trip carries (a check's, or a
-- flush's); the store prepends the same settings line and common.lua as for decide.lua. Keys are
-- decide.lua's. A result `r` is one argument, its fields at fixed byte positions:
--   1-8    the call's window key                 9-16   the result digest
--   17-24  the pair key of the call key and the result digest
--   25     '0' when the result is an error       26-33  the error digest
--   34-41  the call's near-duplicate key (NONE when it has none)
--   42-49  the pair key of the near-duplicate key and the result digest
--   50     the length n of the call's full digest, which follows (51 to 50 + n), then the tool's name
--
-- A result counts only for an allowed call awaiting it, once (as AgentState.awaited_entry):
-- until the agent's first result, the newest call (`aw`); then the last calls in `pend`.
-- observe(r) returns 1 when the result counted, else 0.

local function observe(r)
  local state, win, latest, order = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
  local key, result, pair = string.sub(r, 1, 8), string.sub(r, 9, 16), string.sub(r, 17, 24)
  local failed, err = string.sub(r, 25, 25) == '0', string.sub(r, 26, 33)
  local near, near_pair = string.sub(r, 34, 41), string.sub(r, 42, 49)
  local n = string.byte(r, 50)
  local digest, tool = string.sub(r, 51, 50 + n), string.sub(r, 51 + n)

  local f = redis.call('HMGET', state, 'calls', 'puts', 'aw', 'pend', 'rk', 'rs', 'rr', 'digest', 'sres',
    'et', 'ek', 'es', 'ec', 'ecs', 'np', 'nq', 'npend', 'ch', 'cr', 'cm')
  local calls, puts, awaited, pending = tonumber(f[1]) or 0, tonumber(f[2]) or 0, f[3], f[4] or ''
  local run_key, run_stale, run_result, streak_digest, streak_result = f[5], tonumber(f[6]) or 0, f[7], f[8], f[9]
  local err_tool, err_key, err_streak, err_call, err_call_streak = f[10], f[11], tonumber(f[12]) or 0, f[13], tonumber(f[14]) or 0
  local near_pushed, near_puts = tonumber(f[15]) or 0, tonumber(f[16]) or 0
  local changes = {}

  local function set(field, value)
    table.insert(changes, field)
    table.insert(changes, value)
  end

  -- The window index of the awaiting call of this key, taken off the awaited calls; nil if none.
  local function awaited_entry()
    local index
    local p = find_record(pending, key, RECORD)
    if p then
      index = tonumber(string.sub(pending, p + 8, p + RECORD - 1))
      set('pend', string.sub(pending, 1, p - 1) .. string.sub(pending, p + RECORD))
    elseif awaited == key then
      index = calls - 1  -- the newest allowed call
    end
    if awaited and awaited ~= '' then set('aw', '') end
    return index
  end

  -- Re-key the call's window entry by its result, and follow the run of this call's results.
  local function observe_window(b, index)
    if b[2] ~= 1 then return end
    local held = redis.call('STRLEN', win) / 8
    local age = calls - 1 - index
    if age >= 0 and age < held then redis.call('SETRANGE', win, (index % size) * 8, pair) end
    if key == run_key then
      set('rs', result == run_result and run_stale + 1 or 1)
      set('rr', result)
    end
  end

  local function observe_repeat()
    if digest ~= streak_digest then return end
    if streak_result and streak_result ~= '' and result ~= streak_result then set('stale', 1) end
    set('sres', result)
  end

  local function observe_same_error()
    if not failed then
      set('et', '') set('ek', '') set('es', 0) set('ec', '') set('ecs', 0)
      return
    end
    if tool == err_tool and err == err_key then
      set('es', err_streak + 1)
      set('ecs', key == err_call and err_call_streak + 1 or 1)
    else
      set('et', tool) set('ek', err) set('es', 1) set('ecs', 1)
    end
    set('ec', key)
  end

  -- Remember `entry`'s latest result (as `entry_pair`) in the hash `table` bounded by the ring
  -- `ring`: the entry remembered `bound` results ago goes unless updated since. The new count.
  local function remember(table_key, ring_key, entry, entry_pair, count, bound)
    count = count + 1
    local at = ((count - 1) % bound) * 8
    local oldest = redis.call('GETRANGE', ring_key, at, at + 7)
    if #oldest == 8 then
      local v = redis.call('HGET', table_key, oldest)
      if v and tonumber(string.sub(v, 9)) == count - bound then redis.call('HDEL', table_key, oldest) end
    end
    redis.call('SETRANGE', ring_key, at, entry)
    redis.call('HSET', table_key, entry, entry_pair .. count)
    return count
  end

  -- near_duplicate's own window: re-key the latest awaiting entry of this near key, remember its result.
  local function observe_near(b)
    if near_pushed == 0 or near == NONE then return end
    local records = f[17] or ''
    local p = find_record(records, near, RECORD)
    if p then
      local index = tonumber(string.sub(records, p + 8, p + RECORD - 1))
      set('npend', string.sub(records, 1, p - 1) .. string.sub(records, p + RECORD))
      local age = near_pushed - 1 - index
      if age >= 0 and age < math.min(near_pushed, b[2]) then
        redis.call('SETRANGE', KEYS[5], (index % b[2]) * 8, near_pair)
      end
    end
    near_puts = remember(KEYS[6], KEYS[7], near, near_pair, near_puts, b[2])
    set('nq', near_puts)
  end

  -- The cycle: the newest call's result; a result unlike the call's p before it breaks period p.
  local function observe_cycle(b)
    local history, outcomes, k = f[18] or '', f[19] or '', b[2]
    if history == '' and puts == 0 and b[5] == 1 then  -- the agent's first result: its call,
      history = key                                    -- the newest, starts the tracked calls
      set('ch', history)
    end
    local n = #history / 8
    if b[4] ~= 1 or n == 0 or string.sub(history, -8) ~= key then return end
    if outcomes == '' then outcomes = string.rep(NONE, n) end  -- no result known yet
    outcomes = string.sub(outcomes, 1, -9) .. result
    set('cr', outcomes)
    local matches = cycle_matches(f[20], k)
    for p = 2, math.min(k, n - 1) do
      local at = (n - 1 - p) * 8
      local earlier = string.sub(outcomes, at + 1, at + 8)
      if earlier ~= NONE and earlier ~= result then matches[p] = 0 end
    end
    local joined = joined_matches(matches, k)
    if joined ~= (f[20] or '') then set('cm', joined) end
  end

  local function save()  -- the keys' expiry is refreshed once per round trip, after (flush.lua, decide.lua)
    if #changes > 0 then redis.call('HSET', state, unpack(changes)) end
  end

  local index = awaited_entry()
  if not index then
    save()
    return 0
  end
  for _, b in ipairs(breakers) do
    local kind = not b.warn and b[1]
    if kind == 'duplicate' then
      observe_window(b, index)
    elseif kind == 'repeat' then
      observe_repeat()
    elseif kind == 'same_error' then
      observe_same_error()
    elseif kind == 'near_duplicate' then
      observe_near(b)
    elseif kind == 'cycle' then
      observe_cycle(b)
    elseif UNITS[kind] then
      UNITS[kind].observe(b, key, result, failed, err, tool)
    end
  end
  puts = remember(latest, order, key, pair, puts, size)
  set('puts', puts)
  save()
  return 1
end
