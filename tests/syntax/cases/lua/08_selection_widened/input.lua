local function f(values)
  return #va«lu»es
end
