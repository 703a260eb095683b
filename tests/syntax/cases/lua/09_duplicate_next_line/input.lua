local function f(a)
  █
  return a
end
