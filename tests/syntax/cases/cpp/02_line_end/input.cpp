int add(int a, int b) {
    auto t = █
    return t;
}
