-- loopfuse: read the agent's state, then apply the results this process held back for the agent
-- since its last round trip, oldest first, before anything else the round trip does (a check
-- then decides on them).
--
-- The store prepends the settings line, common.lua and observe.lua (observe(r)).
-- ARGV[#ARGV]  how many results the round trip carries; they come just before it, one argument
--              each (observe.lua), after the round trip's own arguments (a check's: decide.lua)

F, OUT = load_state(), {}
local held = tonumber(ARGV[#ARGV])
local counted = 0
for i = #ARGV - held, #ARGV - 1 do
  counted = counted + observe(ARGV[i])
end
