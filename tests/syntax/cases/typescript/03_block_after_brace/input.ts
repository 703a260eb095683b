function add(a: number, b: number): number {█
}
