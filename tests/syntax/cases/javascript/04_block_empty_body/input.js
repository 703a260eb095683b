function add(a, b) {
    █
}
