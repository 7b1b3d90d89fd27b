-- loopfuse: helpers shared by decide.lua and observe.lua (the store prepends this file to both).
--
-- Keys are 8-byte strings; NONE (8 zero bytes) stands for "none" or "unknown": a call without a
-- near-duplicate key, a cycle entry whose result is not known yet.
-- A pending record is a key and its window index as 12 digits (RECORD bytes).

local RECORD, NONE = 20, string.rep('\0', 8)

-- The breakers that bring their own fragment (lua/breakers/<kind>.lua), by kind: each an entry
-- {check = f(b, key, tool) -> count, limit, rule | nil, record = f(b, key) (optional),
--  observe = f(b, key, result, failed, err, tool)}, b being the breaker's settings.
local UNITS = {}

-- The position (from 1) of `entry` in `records`, a string of `width`-byte records; nil if absent.
local function find_record(records, entry, width)
  local i = 1
  while true do
    local p = string.find(records, entry, i, true)
    if not p then return nil end
    if (p - 1) % width == 0 then return p end
    i = p + 1
  end
end

-- The cycle breaker's match counts m[2..k], stored as "m2,m3,...,mk", or '' when all are 0.
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
