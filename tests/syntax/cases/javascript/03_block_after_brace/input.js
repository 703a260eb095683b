function add(a, b) {█
}
