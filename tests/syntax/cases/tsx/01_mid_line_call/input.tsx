function add(a: number, b: number): number {
    let t = Math.max(█);
    return t;
}
