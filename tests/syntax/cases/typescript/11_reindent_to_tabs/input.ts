function add(a: number, b: number): number {
	let t: number = a;
	let u: number = b;
	if (t) {█
	}
}
