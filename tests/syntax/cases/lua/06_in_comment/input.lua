-- compute the █
local x = 1
