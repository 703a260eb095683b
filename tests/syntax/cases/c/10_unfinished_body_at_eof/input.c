int add(int a, int b) {
    int t = a;
█