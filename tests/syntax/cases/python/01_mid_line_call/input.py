def f(xs):
    return sum(█)
