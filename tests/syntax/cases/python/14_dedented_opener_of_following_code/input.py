def f(xs):
    for x in xs:
        print(x)
█        print(-x)
    return xs
