function add(a: number, b: number): number {
    let t: number = Math.max(█);
    return t;
}
