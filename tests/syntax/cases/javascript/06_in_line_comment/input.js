function add(a, b) {
    // add the two █
    return a + b;
}
