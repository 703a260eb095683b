package main

func add(a int, b int) int {
    // add the two █
    return a + b
}
