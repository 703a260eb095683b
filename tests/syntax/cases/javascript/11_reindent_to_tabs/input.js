function add(a, b) {
	let t = a;
	let u = b;
	if (t) {█
	}
}
