def fib(n):
    if n < 2:
        return n
    return 


print(fib(10))
