function add(a, b) {
    let t = █
    return t;
}
