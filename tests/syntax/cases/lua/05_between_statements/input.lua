local function f(xs)
  local t = 0
  █
  return t
end
