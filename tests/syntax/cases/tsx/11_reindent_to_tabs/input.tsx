function add(a: number, b: number): number {
	let t = a;
	let u = b;
	if (t) {█
	}
}
