int add(int a, int b) {
    auto t = std::max(█);
    return t;
}
