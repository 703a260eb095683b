class A {
    int add(int a, int b) {█
    }
}
