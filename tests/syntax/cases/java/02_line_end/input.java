class A {
    int add(int a, int b) {
        int t = █
        return t;
    }
}
