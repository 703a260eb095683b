local function f(a, b)
  local t = math.max(█)
  return t
end
