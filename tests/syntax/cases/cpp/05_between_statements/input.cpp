int add(int a, int b) {
    auto t = a;
    █
    return t;
}
