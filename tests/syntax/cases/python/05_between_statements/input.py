def f(xs):
    total = 0
    █
    return total
