function add(a: number, b: number): number {
    const s = "hello, █";
    return a + b;
}
