local function f(a)
  █
end
