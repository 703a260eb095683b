package main

func add(a int, b int) int {
    s := "hello, █"
    return a + b
}
