int add(int a, int b) {
    int t = sum(█);
    return t;
}
