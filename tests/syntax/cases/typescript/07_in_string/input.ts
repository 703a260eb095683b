function add(a: number, b: number): number {
    const s: string = "hello, █";
    return a + b;
}
