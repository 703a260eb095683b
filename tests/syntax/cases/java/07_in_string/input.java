class A {
    int add(int a, int b) {
        String s = "hello, █";
        return a + b;
    }
}
