function add(a: number, b: number): number {
    // add the two █
    return a + b;
}
