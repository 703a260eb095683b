local function add(a, b)█
end
