function add(a, b) {
    const s = "hello, █";
    return a + b;
}
