int add(int a, int b) {
	auto t = a;
	auto u = b;
	if (t) {█
	}
}
