def f():
    # compute the █
    return 1
