package main

func add(a int, b int) int {
    t := a
    █
    return t
}
