function add(a, b) {
    let t = Math.max(█);
    return t;
}
