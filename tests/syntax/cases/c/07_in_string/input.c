int add(int a, int b) {
    const char *s = "hello, █";
    return a + b;
}
