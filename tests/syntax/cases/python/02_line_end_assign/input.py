def f(a, b):
    total = █
    return total
