-- loopfuse: read the agent's state, then apply the results this process held back for the agent
-- since its last round trip, oldest first, before anything else the round trip does (a check
-- then decides on them).
--
-- The store prepends the settings line, common.lua and observe.lua (observe(r)).
-- ARGV[#ARGV]  how many results the round trip carries; they come just before it, one argument
--              each (observe.lua), after the round trip's own arguments (a check's: decide.lua)
--              and the round trip's id, unique to it
-- A round trip whose id is the agent's last (`tid`) already ran: the client sent it again on a
-- new connection after losing the first one's reply. It gets that reply (`trep`) and changes nothing.

F, OUT = load_state(), {}
local held = tonumber(ARGV[#ARGV])
local trip = ARGV[#ARGV - held - 1]
if F.tid == trip then return cjson.decode(F.trep) end
local counted = 0
for i = #ARGV - held, #ARGV - 1 do
  counted = counted + observe(ARGV[i])
end

-- Keep this round trip's id and reply, for a retry of it (see above); then write the state.
local function answered(reply)
  put('tid', trip)
  put('trep', cjson.encode(reply))
  return reply
end
