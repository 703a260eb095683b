class A {
    int add(int a, int b) {
        int t = Math.max(█);
        return t;
    }
}
