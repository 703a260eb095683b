def f(xs):
  for x in xs:
    print(x)
  if xs:█
