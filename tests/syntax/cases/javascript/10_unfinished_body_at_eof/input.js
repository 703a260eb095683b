function add(a, b) {
    let t = a;
█