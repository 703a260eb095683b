int add(int a, int b) {
    // add the two █
    return a + b;
}
