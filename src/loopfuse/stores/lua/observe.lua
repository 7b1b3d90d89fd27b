-- loopfuse: let every breaker of one guard observe the result of one agent's call, atomically.
--
-- The store prepends the same settings line as for decide.lua. Keys are decide.lua's.
-- ARGV[1]  the call's window key (8 bytes)      ARGV[2]  the call's full digest (32 bytes)
-- ARGV[3]  the tool's name                      ARGV[4]  the result digest (8 bytes)
-- ARGV[5]  the pair key of the call key and the result digest (8 bytes)
-- ARGV[6]  '0' when the result is an error      ARGV[7]  the error digest (8 bytes)
--
-- A result counts only for an allowed call awaiting it, once (as AgentState.awaited_entry):
-- until the agent's first result, the newest call (`aw`); then the last calls in `pend`.
-- Returns 1 when the result counted, else 0.

local state, win, latest, order = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local key, digest, tool, result, pair = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]
local failed, err = ARGV[6] == '0', ARGV[7]
local RECORD = 20

local f = redis.call('HMGET', state, 'calls', 'puts', 'aw', 'pend', 'rk', 'rs', 'rr', 'digest', 'sres',
  'et', 'ek', 'es', 'ec', 'ecs')
local calls, puts, awaited, pending = tonumber(f[1]) or 0, tonumber(f[2]) or 0, f[3], f[4] or ''
local run_key, run_stale, run_result, streak_digest, streak_result = f[5], tonumber(f[6]) or 0, f[7], f[8], f[9]
local err_tool, err_key, err_streak, err_call, err_call_streak = f[10], f[11], tonumber(f[12]) or 0, f[13], tonumber(f[14]) or 0
local changes = {}

local function set(field, value)
  table.insert(changes, field)
  table.insert(changes, value)
end

local function find_record(records, entry, width)
  local i = 1
  while true do
    local p = string.find(records, entry, i, true)
    if not p then return nil end
    if (p - 1) % width == 0 then return p end
    i = p + 1
  end
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

-- Remember the call's latest result; the key remembered `size` results ago goes unless updated since.
local function remember()
  puts = puts + 1
  local at = ((puts - 1) % size) * 8
  local oldest = redis.call('GETRANGE', order, at, at + 7)
  if #oldest == 8 then
    local v = redis.call('HGET', latest, oldest)
    if v and tonumber(string.sub(v, 9)) == puts - size then redis.call('HDEL', latest, oldest) end
  end
  redis.call('SETRANGE', order, at, key)
  redis.call('HSET', latest, key, pair .. puts)
  set('puts', puts)
end

local function save()
  if #changes > 0 then redis.call('HSET', state, unpack(changes)) end
  for _, k in ipairs(KEYS) do redis.call('PEXPIRE', k, ttl) end
end

local index = awaited_entry()
if not index then
  save()
  return 0
end
for _, b in ipairs(breakers) do
  if b[1] == 'duplicate' then
    observe_window(b, index)
  elseif b[1] == 'repeat' then
    observe_repeat()
  elseif b[1] == 'same_error' then
    observe_same_error()
  end
end
remember()
save()
return 1
