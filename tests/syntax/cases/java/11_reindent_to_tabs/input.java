class A {
	int add(int a, int b) {
		int t = a;
		int u = b;
		if (t > 0) {█
		}
	}
}
