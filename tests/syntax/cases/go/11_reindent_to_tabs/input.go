package main

func add(a int, b int) int {
	t := a
	u := b
	if t > 0 {█
	}
}
