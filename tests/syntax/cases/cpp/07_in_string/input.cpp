int add(int a, int b) {
    std::string s = "hello, █";
    return a + b;
}
