-- loopfuse: evaluate every breaker of one guard for one agent's call, atomically.
--
-- The store prepends two lines binding the guard's settings (so a check sends only its call):
--   local size, ttl, breakers = <window length>, <idle expiry ms>, {{<kind>, <setting>...}, ...}
--   local RECORDING, OBSERVING, TOUCHING, REFUSING = {breakers[i], ...}, {...}, {...}, {[breakers[j]] = true}
-- with the breakers in the guard's order (each kind's settings: its fragment's header), and
-- those whose unit records, observes, touches or hears it refused a call (common.lua); then
-- common.lua, the fragments of the guard's breakers (lua/breakers/<kind>.lua), observe.lua and
-- pending.lua, which reads the agent's state and applies the results this process held back for
-- the agent (ARGV after the check's own, see pending.lua) first, so the check sees them.
--
-- KEYS[1]  the agent's state hash: calls, denials, awaited results (aw, pend), the number of
--          results seen (puts) and the latest ones (lr, observe.lua), first:<kind>, and the
--          fields of each breaker (its fragment)
-- ARGV[1]  the call's window key (8 bytes)      ARGV[2]  the call's full digest (32 bytes)
-- ARGV[3]  the tool's name                      ARGV[4], ARGV[5]  the window limit for this
--          call without and with a known result (per-tool limits are resolved by the store)
-- ARGV[6]  the call's near-duplicate key: NONE when it has none, '' when the store did not
--          compute it (its guard has seen no result yet)
-- ARGV[7]  the near-duplicate limit for this call's tool (ARGV[6] NONE and ARGV[7] 0 when the
--          guard has no near_duplicate breaker)
-- ARGV[8]  '1' when the call is a note (a thought: it keeps the denials in a row), else '0'
--
-- Returns 0 when the call is allowed and recorded, else {kind, count, limit, first, denials in a row,
-- rule}, rule telling the limit reached apart where a kind has several ('' otherwise);
-- {0, kind, count, limit, rule} when allowed with the warning of a warner;
-- 1, having changed nothing, when the near-duplicate key is needed and was not sent (the agent
-- has results; a store that has seen no result sends none): the store sends the call again with
-- it. (A check carrying results always sends it, having seen results, so this never follows
-- results just applied.)
-- A denied call is recorded by no breaker.
-- Pair keys and digests are computed by the store: Lua numbers are doubles, so it only compares bytes.

local PENDING = math.min(size, 32)
local calls, denials, puts = tonumber(F.calls) or 0, tonumber(F.denials) or 0, tonumber(F.puts) or 0
local c = {key = ARGV[1], digest = ARGV[2], tool = ARGV[3], calls = calls, puts = puts, note = ARGV[8] == '1'}
local key = c.key

-- Write the state, refresh its expiry, and let the units with keys of their own refresh theirs.
local function touch()
  save()
  for _, b in ipairs(TOUCHING) do UNITS[b[1]]('touch', b) end
end

-- Evaluate the breakers in order; the first denial wins and records nothing else. A warner
-- (b.warn set: a breaker's copy at its warn_at, after every breaker) only notes the first
-- warning of an allowed call.
local warning = nil
for _, b in ipairs(breakers) do
  local kind = b[1]
  local count, limit, rule = UNITS[kind]('check', b, c)
  if count == RESEND then save() return 1 end  -- (nothing to save: see above)
  if count and b.warn then
    warning = warning or {0, kind, count, limit, rule or ''}
  elseif count then
    -- Denied: its bookkeeping, and a result of this call reported from now on is the denied
    -- one's (the wait ends).
    local first = redis.call('HSETNX', KEYS[1], 'first:' .. kind, 1)
    if REFUSING[b] then UNITS[kind]('refused', b, c) end
    put('denials', denials + 1)
    if puts == 0 then
      if F.aw == key then put('aw', '') end
    else
      local pending = F.pend or ''
      local p = find_record(pending, key, RECORD)
      if p then put('pend', string.sub(pending, 1, p - 1) .. string.sub(pending, p + RECORD)) end
    end
    local reply = answered({kind, count, limit, first, denials + 1, rule or ''})
    touch()
    return reply
  end
end

-- Allowed: every breaker records the call. Only the fields that change are written.
put('calls', calls + 1)
if ARGV[8] ~= '1' then put('denials', 0, denials) end  -- a thought keeps denials in a row
for _, b in ipairs(RECORDING) do UNITS[b[1]]('record', b, c) end
-- The call now awaits its result: until the agent's first result only the newest call
-- (its window index is calls), then the last PENDING calls (key and window index).
if puts == 0 then
  put('aw', key, F.aw)
else
  put('pend', awaiting(F.pend or '', key, calls, PENDING))
end
answered(warning or 0)
touch()
return warning or 0
