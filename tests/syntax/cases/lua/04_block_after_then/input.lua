local function f(x)
  if x > 0 then█
  end
end
