local function f(a, b)
  local t = █
  return t
end
