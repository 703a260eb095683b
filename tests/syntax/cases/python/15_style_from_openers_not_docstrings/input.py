def f(xs):
    """Sort.

      a
        b
          c
            d
    """
    if xs:█
    return xs
